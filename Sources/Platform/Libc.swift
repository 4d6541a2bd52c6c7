// The platform's C library, re-exported: modules above Platform import it and never Glibc or
// Darwin, so the calls that differ between the two stay in this module's `#if` branches.
#if canImport(Darwin)
@_exported import Darwin
#elseif canImport(Glibc)
@_exported import Glibc
#endif
