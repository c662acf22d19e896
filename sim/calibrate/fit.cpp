// napisim: bounded log-space Levenberg-Marquardt (see fit.hpp). Eigen 3.4 unsupported module,
// MINPACK's lmder algorithm (More 1978) as ported in unsupported/Eigen/src/LevenbergMarquardt.
#include "sim/calibrate/fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <unsupported/Eigen/LevenbergMarquardt>

namespace napisim::calibrate {

namespace {

double sigmoid(double z) {
  return 1.0 / (1.0 + std::exp(-z));
}

struct Transform {
  Eigen::VectorXd ulo, uhi;  // log bounds

  explicit Transform(const std::vector<FitParam>& ps) : ulo(ps.size()), uhi(ps.size()) {
    for (std::size_t j = 0; j < ps.size(); ++j) {
      if (!(ps[j].lo > 0) || !(ps[j].hi > ps[j].lo))
        throw std::invalid_argument("parameter " + ps[j].name + ": expected 0 < lo < hi");
      ulo[static_cast<Eigen::Index>(j)] = std::log(ps[j].lo);
      uhi[static_cast<Eigen::Index>(j)] = std::log(ps[j].hi);
    }
  }
  Eigen::VectorXd to_params(const Eigen::VectorXd& z) const {
    Eigen::VectorXd p(z.size());
    for (Eigen::Index j = 0; j < z.size(); ++j)
      p[j] = std::exp(ulo[j] + (uhi[j] - ulo[j]) * sigmoid(z[j]));
    return p;
  }
  Eigen::VectorXd to_z(const Eigen::VectorXd& p) const {
    Eigen::VectorXd z(p.size());
    for (Eigen::Index j = 0; j < p.size(); ++j) {
      const double t = std::clamp((std::log(p[j]) - ulo[j]) / (uhi[j] - ulo[j]), 1e-3, 1.0 - 1e-3);
      z[j] = std::log(t / (1.0 - t));
    }
    return z;
  }
  double dlogp_dz(const Eigen::VectorXd& z, Eigen::Index j) const {
    const double s = sigmoid(z[j]);
    return (uhi[j] - ulo[j]) * s * (1.0 - s);
  }
};

// The functor LM sees: z -> [data residuals; prior rows]. Results are memoised by z so the point
// LM just evaluated is not simulated again for its Jacobian.
struct Functor : Eigen::DenseFunctor<double> {
  const Transform& tr;
  const BatchResiduals& batch;
  const FitOptions& opt;
  Eigen::VectorXd u_start;
  int m_data;
  int evaluations = 0;
  std::map<std::vector<double>, Eigen::VectorXd> memo;

  Functor(int n, int m, const Transform& t, const BatchResiduals& b, const FitOptions& o, Eigen::VectorXd u0)
      : Eigen::DenseFunctor<double>(n, m + (o.prior_weight > 0 ? n : 0))
      , tr(t)
      , batch(b)
      , opt(o)
      , u_start(std::move(u0))
      , m_data(m) {}

  static std::vector<double> key(const Eigen::VectorXd& z) { return {z.data(), z.data() + z.size()}; }

  Eigen::VectorXd full(const Eigen::VectorXd& z, const Eigen::VectorXd& data) const {
    Eigen::VectorXd f(values());
    f.head(m_data) = data;
    if (values() > m_data) {
      const Eigen::VectorXd u = tr.to_params(z).array().log().matrix();
      f.tail(inputs()) = std::sqrt(opt.prior_weight) * (u - u_start);
    }
    return f;
  }

  // Evaluates every z not memoised in one batch.
  std::vector<Eigen::VectorXd> eval(const std::vector<Eigen::VectorXd>& zs) {
    std::vector<Eigen::VectorXd> todo;
    for (const auto& z : zs)
      if (!memo.count(key(z))) todo.push_back(tr.to_params(z));
    if (!todo.empty()) {
      const std::vector<Eigen::VectorXd> rs = batch(todo);
      if (rs.size() != todo.size()) throw std::logic_error("fit: batch returned the wrong number of residual vectors");
      std::size_t k = 0;
      for (const auto& z : zs) {
        if (memo.count(key(z))) continue;
        if (rs[k].size() != m_data) throw std::logic_error("fit: residual vector of the wrong size");
        memo[key(z)] = rs[k++];
        ++evaluations;
      }
    }
    std::vector<Eigen::VectorXd> out;
    for (const auto& z : zs)
      out.push_back(full(z, memo.at(key(z))));
    return out;
  }

  int operator()(const Eigen::VectorXd& z, Eigen::VectorXd& f) {
    f = eval({z})[0];
    return 0;
  }

  int df(const Eigen::VectorXd& z, Eigen::MatrixXd& jac) {
    std::vector<Eigen::VectorXd> zs = {z};
    for (Eigen::Index j = 0; j < z.size(); ++j) {
      Eigen::VectorXd zj = z;
      zj[j] += opt.fd_step / tr.dlogp_dz(z, j);
      zs.push_back(zj);
    }
    const int before = evaluations;
    const std::vector<Eigen::VectorXd> fs = eval(zs);
    jac.resize(values(), inputs());
    for (Eigen::Index j = 0; j < z.size(); ++j)
      jac.col(j) = (fs[static_cast<std::size_t>(j) + 1] - fs[0]) / (zs[static_cast<std::size_t>(j) + 1][j] - z[j]);
    return evaluations - before;  // >0: LM counts them as function evaluations
  }
};

const char* status_name(Eigen::LevenbergMarquardtSpace::Status s) {
  using namespace Eigen::LevenbergMarquardtSpace;
  switch (s) {
    case RelativeReductionTooSmall:
      return "converged (relative reduction of the residual below ftol)";
    case RelativeErrorTooSmall:
      return "converged (relative parameter change below xtol)";
    case RelativeErrorAndReductionTooSmall:
      return "converged (xtol and ftol)";
    case CosinusTooSmall:
      return "converged (gradient orthogonal to residuals)";
    case TooManyFunctionEvaluation:
      return "stopped: evaluation limit";
    case FtolTooSmall:
    case XtolTooSmall:
    case GtolTooSmall:
      return "stopped: tolerance too small";
    case ImproperInputParameters:
      return "stopped: improper input";
    case UserAsked:
      return "stopped by user";
    default:
      return "running";
  }
}

}  // namespace

Eigen::MatrixXd log_jacobian(const Eigen::VectorXd& p, const BatchResiduals& residuals, double step,
                             const Eigen::VectorXd* r_at_p) {
  std::vector<Eigen::VectorXd> ps;
  if (!r_at_p) ps.push_back(p);
  for (Eigen::Index j = 0; j < p.size(); ++j) {
    Eigen::VectorXd pj = p;
    pj[j] *= std::exp(step);
    ps.push_back(pj);
  }
  const std::vector<Eigen::VectorXd> rs = residuals(ps);
  const Eigen::VectorXd r0 = r_at_p ? *r_at_p : rs[0];
  const std::size_t off = r_at_p ? 0 : 1;
  Eigen::MatrixXd jac(r0.size(), p.size());
  for (Eigen::Index j = 0; j < p.size(); ++j)
    jac.col(j) = (rs[static_cast<std::size_t>(j) + off] - r0) / step;
  return jac;
}

FitResult fit_bounded_log(const std::vector<FitParam>& params, int m, const BatchResiduals& residuals,
                          const FitOptions& opt) {
  const int n = static_cast<int>(params.size());
  if (n == 0) throw std::invalid_argument("fit: no parameters to fit");
  const Transform tr(params);
  Eigen::VectorXd p0(n);
  for (int j = 0; j < n; ++j)
    p0[j] = std::clamp(params[static_cast<std::size_t>(j)].start, params[static_cast<std::size_t>(j)].lo,
                       params[static_cast<std::size_t>(j)].hi);
  Eigen::VectorXd z = tr.to_z(p0);
  p0 = tr.to_params(z);  // the start actually used (just inside the bounds)
  Functor f(n, m, tr, residuals, opt, p0.array().log().matrix());
  if (f.values() < n)
    throw std::invalid_argument("fit: " + std::to_string(m) + " residuals cannot determine " + std::to_string(n) +
                                " parameters; add targets or a prior_weight");

  FitResult res;
  res.start = p0;
  Eigen::LevenbergMarquardt<Functor> lm(f);
  lm.setMaxfev(opt.max_evaluations);
  lm.setXtol(opt.xtol);
  lm.setFtol(opt.ftol);
  lm.setFactor(1.0);  // initial step bound: about one unit of z (a large move in log p), not 100
  Eigen::LevenbergMarquardtSpace::Status st = lm.minimizeInit(z);
  res.r_start = f.memo.at(Functor::key(z));
  res.cost_start = res.r_start.squaredNorm();
  if (opt.log) opt.log("start: cost " + std::to_string(res.cost_start));
  int it = 0;
  while (st == Eigen::LevenbergMarquardtSpace::NotStarted || st == Eigen::LevenbergMarquardtSpace::Running) {
    if (it >= opt.max_iterations) break;
    st = lm.minimizeOneStep(z);
    ++it;
    const Eigen::VectorXd& r = f.memo.at(Functor::key(z));
    if (opt.log)
      opt.log("iteration " + std::to_string(it) + ": cost " + std::to_string(r.squaredNorm()) + ", evaluations " +
              std::to_string(f.evaluations));
  }
  res.iterations = it;
  res.status = (st == Eigen::LevenbergMarquardtSpace::Running || st == Eigen::LevenbergMarquardtSpace::NotStarted)
                   ? (it >= opt.max_iterations ? "stopped: iteration limit" : "running")
                   : status_name(st);
  res.params = tr.to_params(z);
  res.r = f.memo.at(Functor::key(z));
  res.cost = res.r.squaredNorm();
  res.jacobian = log_jacobian(res.params, residuals, opt.fd_step, &res.r);
  res.evaluations = f.evaluations + n;
  return res;
}

}  // namespace napisim::calibrate
