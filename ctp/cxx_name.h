/* C++ names for people: a Boost or Asio symbol is mostly template arguments (one frame of an
 * Asio program reaches thousands of characters), which bury the function's own name in a text
 * view. Shared by the views that print names for people (ctp-cat's text report, ctp-pstack). */
#ifndef CTP_CXX_NAME_H
#define CTP_CXX_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Writes `name` to f: as it is when `full`, else with each outermost template argument list
 * written as <...> ("std::vector<...>::push_back(int const&)"). Operators such as operator<<
 * keep their angle brackets. */
void ctp_put_cxx_name(FILE *f, const char *name, bool full);

/* The shortened name into out (cap bytes, NUL-terminated, cut to fit); returns its whole length,
 * so that a result of cap or more says it was cut. */
size_t ctp_cxx_name_short(const char *name, char *out, size_t cap);

#endif
