// The C++ tests' check macros, shaped like the gtest ones GE's own tests use: an EXPECT_* that
// fails records the failure and goes on; an ASSERT_* that fails records it and returns from the
// (void) test case; a REQUIRE_TRUE that fails ends the program (exit 1), for helpers that
// return a value, where an ASSERT_* cannot return. main() returns g_failures != 0.
#ifndef SA_TEST_EXPECT_HPP
#define SA_TEST_EXPECT_HPP

#include <cstdio>
#include <cstdlib>

namespace {
int g_failures = 0;
}  // namespace

// The body of every check: when `c` is false, says where and what (`text`), then `on_failure`.
#define SA_CHECK_OR_(c, text, on_failure)                                     \
  do {                                                                        \
    if (!(c)) {                                                               \
      std::fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, text); \
      on_failure;                                                             \
    }                                                                         \
  } while (0)
#define EXPECT_TRUE(c) SA_CHECK_OR_(c, #c, ++g_failures)
#define EXPECT_EQ(a, b) EXPECT_TRUE((a) == (b))
#define EXPECT_NE(a, b) EXPECT_TRUE((a) != (b))
#define ASSERT_TRUE(c) SA_CHECK_OR_(c, #c, ++g_failures; return)
#define ASSERT_EQ(a, b) ASSERT_TRUE((a) == (b))
#define ASSERT_NE(a, b) ASSERT_TRUE((a) != (b))
#define REQUIRE_TRUE(c) SA_CHECK_OR_(c, #c, std::exit(1))

#endif
