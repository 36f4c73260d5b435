# fish completion for kbq: subcommands, options, formats, languages, GPU
# types and recipe names from kbq itself (kbq --completion-words WHAT: its
# CLI11 definitions and its knowledge base).
function __kbq_words
    command kbq --completion-words $argv[1] 2>/dev/null
end
function __kbq_no_subcommand
    not __fish_seen_subcommand_from (__kbq_words subcommands)
end

complete -c kbq -f
complete -c kbq -n __kbq_no_subcommand -a "(__kbq_words subcommands)"
complete -c kbq -n "__fish_seen_subcommand_from show check" -a "(__kbq_words recipes)"
complete -c kbq -s f -l format -x -a "(__kbq_words formats)" -d "output format"
complete -c kbq -s l -l lang -x -a "(__kbq_words languages)" -d "language of prose"
complete -c kbq -l hardware -x -a "(__kbq_words gpus)" -d "GPU type"
complete -c kbq -l kind -x -a "(__kbq_words kinds)" -d "library or benchmark recipes"
complete -c kbq -l kb -r -F -d "knowledge base file"
complete -c kbq -s n -l limit -x -d "number of recipes"
complete -c kbq -l gpus -x -d "world size"
complete -c kbq -s e -l explain -d "why each recipe is placed where it is"
complete -c kbq -l version -d "versions of kbq and its knowledge base"
complete -c kbq -l batch -d "one JSON Lines record per line of standard input"
complete -c kbq -l select -x -d "--batch: only these parts of each record (JSON Pointers)"
complete -c kbq -l history -d "older releases' rows too (perf)"

complete -c kbc -f
complete -c kbc -n "not __fish_seen_subcommand_from (command kbc --help 2>/dev/null | string replace -rf '^  ([a-z][a-z-]*) .*' '\$1')" -a "(command kbc --help 2>/dev/null | string replace -rf '^  ([a-z][a-z-]*) .*' '\$1')"
complete -c kbc -l sources -r -F
complete -c kbc -s o -r -F
complete -c kbc -l mbridge -r -F
