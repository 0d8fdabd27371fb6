// Evaluating matrix conditions against a request and, where present, a candidate or a plan.
#pragma once

#include "attnsel/matrix.hpp"
#include "attnsel/request.hpp"

namespace attnsel::detail {

// Everything a condition may test. Candidate and plan fields are unset outside their scope.
struct EvalContext {
  const Request* request = nullptr;
  KvCacheDtype kv_dtype = KvCacheDtype::auto_;  // after request-scope rules
  bool kv_dtype_explicit = false;
  int page_size = 1;            // requested, else the default; for candidates after their own rewrites
  bool page_size_explicit = false;
  BackendId backend = kNoBackend;  // the candidate (backend scope) or the phase's backend (plan scope)
  int phase = -1;
  bool backend_explicit = false;
  bool phase_flag = false;  // named with the phase's own flag, not the slot's joint one
  bool replaced = false;    // put in by another backend's rewrite (Condition::replaced)
  BackendId prefill = kNoBackend;  // plan scope
  BackendId decode = kNoBackend;
  bool radix_cache = true;
};

bool matches(const Condition& c, const EvalContext& ctx);

}  // namespace attnsel::detail
