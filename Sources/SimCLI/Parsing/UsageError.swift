import Scenarios

/// A usage error: what went wrong and, when it is obvious, what was meant. Rendered in one
/// place (``render(command:)``) as `Error: …`, `Usage: …`, `See 'sim-cli … --help'.` — exit 64.
enum UsageError: Error, Equatable {
  case missingCommand
  case unknownCommand(String, suggestion: String?)
  case unknownOption(String, suggestion: String?)
  case missingValue(option: String, valueName: String)
  case invalidValue(option: String, value: String, reason: String, suggestion: String?)
  case flagTakesNoValue(String)
  case repeatedOption(String)
  case missingArgument(String)
  case unexpectedArgument(String)
  case unknownSubject(String, valid: [String], suggestion: String?)
  case other(String)

  var message: String {
    switch self {
    case .missingCommand:
      return "no command given."
    case .unknownCommand(let c, let s):
      return "unknown command '\(c)'." + (s.map { " Did you mean '\($0)'?" } ?? "")
    case .unknownOption(let o, let s):
      return "unknown option '\(o)'." + (s.map { " Did you mean '\($0)'?" } ?? "")
    case .missingValue(let o, let v):
      return "missing value for '\(o) \(v)'."
    case .invalidValue(let o, let v, let reason, let s):
      // A reason that ends in its own punctuation ("…; did you mean 'clock'?") gets no period.
      let stop = reason.last.map { ".?!".contains($0) } == true ? "" : "."
      return "invalid value '\(v)' for '\(o)': \(reason)\(stop)" + (s.map { " Did you mean '\($0)'?" } ?? "")
    case .flagTakesNoValue(let o):
      return "'\(o)' is a flag and takes no value."
    case .repeatedOption(let o):
      return "'\(o)' was given more than once."
    case .missingArgument(let a):
      return "missing argument \(a)."
    case .unexpectedArgument(let a):
      return "unexpected argument '\(a)'."
    case .unknownSubject(let s, let valid, let suggestion):
      return "unknown '\(s)'; expected one of: \(valid.joined(separator: ", "))."
        + (suggestion.map { " Did you mean '\($0)'?" } ?? "")
    case .other(let m):
      return m
    }
  }

  /// The full text for stderr.
  func render(command: CommandSpec?) -> String {
    var text = "Error: \(message)\n"
    if let command {
      text += "Usage: \(command.usage)\n"
      text += "See '\(ToolName.current) \(command.name) --help'.\n"
    } else {
      text += "Usage: \(ToolName.current) COMMAND [OPTIONS]\n"
      text += "See '\(ToolName.current) --help'.\n"
    }
    return text
  }
}
