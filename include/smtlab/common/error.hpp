// Errors raised on bad input (trace, config, API call) and on model failures (watchdog). They carry one message that
// names the file, record/line and key; the program's edge prints it and exits with status 1.
#pragma once

#include <stdexcept>
#include <string>

namespace smtlab {

// Base of every error smtlab reports to a user.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A trace file or generator spec that cannot be read: names the file and the record or line.
class TraceError : public Error {
 public:
  using Error::Error;
};

// A config file, key or value that is wrong: names the file and the key.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A misuse of the Machine API (attach to a busy CPU, an id out of range, ...).
class UsageError : public Error {
 public:
  using Error::Error;
};

// The model stopped making progress: names the cycle, thread and stuck resource.
class DeadlockError : public Error {
 public:
  using Error::Error;
};

}  // namespace smtlab
