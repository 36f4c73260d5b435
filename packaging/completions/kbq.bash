# bash completion for kbq and kbc. Every word comes from the programs
# themselves: kbq's subcommands, options, formats, kinds, languages, GPU
# types and recipe names from `kbq --completion-words WHAT` (its CLI11
# definitions and its knowledge base, or the one --kb names); kbc's from
# its --help.

# The kbq being completed (./build/kbq as typed, else the one on PATH), with
# the --kb FILE of the line so that recipe names come from that KB.
__kbq_words() {
  local prog=${COMP_WORDS[0]} i kb=()
  [[ -x $prog ]] || prog=kbq
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ ${COMP_WORDS[i]} == --kb && $((i + 1)) -lt $COMP_CWORD ]]; then kb=(--kb "${COMP_WORDS[i + 1]}"); fi
  done
  "$prog" "${kb[@]}" --completion-words "$1" 2>/dev/null
}

_kbq() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=""
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  COMPREPLY=()
  case $prev in
    --format | -f) mapfile -t COMPREPLY < <(compgen -W "$(__kbq_words formats)" -- "$cur"); return ;;
    --lang | -l) mapfile -t COMPREPLY < <(compgen -W "$(__kbq_words languages)" -- "$cur"); return ;;
    --hardware) mapfile -t COMPREPLY < <(compgen -W "$(__kbq_words gpus)" -- "$cur"); return ;;
    --kind) mapfile -t COMPREPLY < <(compgen -W "$(__kbq_words kinds)" -- "$cur"); return ;;
    --kb) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
    --limit | -n | --gpus | --select | --completion-words) return ;;
  esac
  # The subcommand of the line, if any (the first word that is one).
  local subs sub="" i
  subs=$(__kbq_words subcommands)
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ " ${subs//$'\n'/ } " == *" ${COMP_WORDS[i]} "* ]]; then
      sub=${COMP_WORDS[i]}
      break
    fi
  done
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(__kbq_words "options${sub:+:$sub}")" -- "$cur")
  elif [[ $sub == show || $sub == check ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(__kbq_words recipes)" -- "$cur")
  elif [[ -z $sub ]] && ((COMP_CWORD == 1)); then
    mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur")
  fi
}
complete -F _kbq kbq

_kbc() {
  local cur=${COMP_WORDS[COMP_CWORD]} prog=${COMP_WORDS[0]} sub="" i
  [[ -x $prog ]] || prog=kbc
  COMPREPLY=()
  local subs
  subs=$("$prog" --help 2>/dev/null | sed -n '/^Subcommands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ " ${subs//$'\n'/ } " == *" ${COMP_WORDS[i]} "* ]]; then
      sub=${COMP_WORDS[i]}
      break
    fi
  done
  if [[ $cur == -* ]]; then
    local opts
    opts=$("$prog" ${sub:+"$sub"} --help 2>/dev/null | grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' | tr -d ' ,')
    mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
  elif [[ -z $sub ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur")
  else
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  fi
}
complete -F _kbc kbc
