// The Catch2 runner: every tests/test_*.cpp links into this one binary.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
