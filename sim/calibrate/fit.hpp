// napisim: bounded nonlinear least squares in log space, for `napisim calibrate`.
//
// Eigen's Levenberg-Marquardt (unsupported/Eigen/LevenbergMarquardt, MINPACK lmder) with a
// forward-difference Jacobian. Each parameter p in [lo, hi] is fitted as z with
//   log p = log lo + (log hi - log lo) * sigmoid(z),
// so every LM step stays inside the bounds and steps are relative (log space). The residual
// function is evaluated for a *batch* of parameter vectors at once, so the n+1 points of one
// Jacobian can run in parallel (each point is a set of simulations in `napisim calibrate`).
// Optional prior rows sqrt(prior_weight) * (log p - log p_start) keep weakly identified
// parameters near their documented defaults (ridge regression in log space).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <Eigen/Dense>

namespace napisim::calibrate {

struct FitParam {
  std::string name;
  double start = 1.0;  // natural units; clamped just inside [lo, hi]
  double lo = 1e-3;
  double hi = 1e3;
};

struct FitOptions {
  int max_iterations = 8;     // LM iterations (one Jacobian each)
  int max_evaluations = 40;   // residual-vector evaluations, Jacobian columns included
  double fd_step = 0.05;      // forward-difference step in log p (5%): larger than simulation noise
  double prior_weight = 0.0;  // weight of the (log p - log p_start) rows
  double xtol = 1e-3;
  double ftol = 1e-3;
  std::function<void(const std::string&)> log;  // progress lines (may be empty)
};

/// Residual vectors (data rows only) for each parameter vector, in natural units.
using BatchResiduals = std::function<std::vector<Eigen::VectorXd>(const std::vector<Eigen::VectorXd>&)>;

struct FitResult {
  Eigen::VectorXd start, params;    // natural units
  Eigen::VectorXd r_start, r;       // data residuals at start and at the solution
  Eigen::MatrixXd jacobian;         // d r / d log p at the solution (data rows)
  double cost_start = 0, cost = 0;  // sum of squared data residuals
  int iterations = 0, evaluations = 0;
  std::string status;
};

/// Minimises sum r(p)^2 (+ prior rows) over the bounded parameters; `m` = number of data residuals.
FitResult fit_bounded_log(const std::vector<FitParam>& params, int m, const BatchResiduals& residuals,
                          const FitOptions& opt);

/// d r / d log p at `p` by forward differences of step `step` (one batch of n+1 points, or n when
/// `r_at_p` is given).
Eigen::MatrixXd log_jacobian(const Eigen::VectorXd& p, const BatchResiduals& residuals, double step,
                             const Eigen::VectorXd* r_at_p = nullptr);

}  // namespace napisim::calibrate
