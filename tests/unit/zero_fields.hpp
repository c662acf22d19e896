// Test helper: a parameter table with every field set to zero (its fields() visitor), so a test
// turns on only the costs its hand-computed timeline uses.
#pragma once

namespace napisim::testing {

/// Sets every field of a parameter table to zero.
template <class P>
struct ZeroFields {
  P& p;
  template <class M, class... Rest>
  void operator()(const char*, M P::*field, Rest&&...) {
    p.*field = M{};
  }
};

/// `P` with every field zero.
template <class P>
P all_zero() {
  P p;
  ZeroFields<P> zero{p};
  P::fields(zero);
  return p;
}

}  // namespace napisim::testing
