// dlsym into a typed slot, and naming the slots left empty. Shared by the NVML and CUDA loaders.
#pragma once

#include <dlfcn.h>

#include <initializer_list>
#include <string>

namespace attnsel::driver {

// The first of `symbols` the library exports (newest version first), or null.
template <class Fn>
void bind_symbol(void* library, std::initializer_list<const char*> symbols, Fn& slot) {
  for (const char* symbol : symbols) {
    if (void* address = dlsym(library, symbol)) {
      slot = reinterpret_cast<Fn>(address);
      return;
    }
  }
}

template <class Fn>
void append_if_null(std::string& out, Fn fn, const char* symbol) {
  if (fn != nullptr) return;
  if (!out.empty()) out += ", ";
  out += symbol;
}

// dlopen's reason, never null.
inline std::string dl_error() {
  const char* why = dlerror();
  return why != nullptr ? why : "dlopen failed";
}

}  // namespace attnsel::driver
