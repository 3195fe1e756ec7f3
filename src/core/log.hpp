// ZYFA_LOG: the one diagnostic switch. "info" prints one line on stderr per decision worth
// knowing (which backend a context got and why, which kernel a call runs); anything else, or
// unset, prints nothing. It never changes what runs.
#pragma once

namespace zyfa {

// True when ZYFA_LOG is "info"; read once per process.
bool log_info() noexcept;

}  // namespace zyfa
