import Foundation
import Scenarios

/// The declared shape of one subcommand: what it takes and how its help reads.
struct CommandSpec: Sendable {
  struct Option: Sendable {
    /// `--seed`
    var name: String
    /// `N` for an option that takes a value; `nil` for a flag.
    var valueName: String?
    var help: String
    /// For options with a fixed set of values (`--format text|json`).
    var choices: [String] = []
    var repeatable = false

    static func value(_ name: String, _ valueName: String, _ help: String, choices: [String] = [], repeatable: Bool = false) -> Option {
      Option(name: name, valueName: valueName, help: help, choices: choices, repeatable: repeatable)
    }
    static func flag(_ name: String, _ help: String) -> Option {
      Option(name: name, valueName: nil, help: help)
    }
  }

  struct Positional: Sendable {
    var name: String
    var help: String
    var optional = false
    /// Takes every remaining argument.
    var variadic = false
  }

  var name: String
  var summary: String
  var discussion: String = ""
  var positionals: [Positional] = []
  var options: [Option] = []
  /// Subcommand-like first arguments (`bench kernel`), checked with "did you mean".
  var subjects: [String] = []
  var examples: [String] = []
  /// Not listed in `sim-cli --help` (developer tools).
  var hidden = false

  func option(named name: String) -> Option? { options.first { $0.name == name } }

  /// `sim-cli run FILE|NAME [--seed N] …`
  var usage: String {
    var parts = [ToolName.current, name]
    for p in positionals {
      let shown = p.variadic ? "\(p.name)..." : p.name
      parts.append(p.optional ? "[\(shown)]" : shown)
    }
    for o in options where o.name != "--help" {
      parts.append(o.valueName.map { "[\(o.name) \($0)]" } ?? "[\(o.name)]")
    }
    return parts.joined(separator: " ")
  }

  func helpText() -> String {
    var text = "\(summary)\n\nUsage: \(usage)\n"
    if !discussion.isEmpty { text += "\n\(discussion)\n" }
    if !positionals.isEmpty {
      text += "\nArguments:\n"
      for p in positionals { text += Self.row(p.name, p.help) }
    }
    text += "\nOptions:\n"
    for o in options {
      let left = o.valueName.map { "\(o.name) \($0)" } ?? o.name
      let choices = o.choices.isEmpty ? "" : " (\(o.choices.joined(separator: ", ")))"
      text += Self.row(left, o.help + choices)
    }
    text += Self.row("-h, --help", "Show this help.")
    if !examples.isEmpty {
      text += "\nExamples:\n"
      for e in examples { text += "  \(e)\n" }
    }
    return Self.naming(text)
  }

  /// `text` with the tool's name (`sim-cli`) replaced by the name of the tool running
  /// (``ToolName/current``): the help of a tool of the user's own shows examples that run it.
  static func naming(_ text: String) -> String {
    let tool = ToolName.current
    return tool == "sim-cli" ? text : text.replacingOccurrences(of: "sim-cli", with: tool)
  }

  static func row(_ left: String, _ right: String) -> String {
    let padded = left.count < 26 ? left + String(repeating: " ", count: 26 - left.count) : left + "\n" + String(repeating: " ", count: 28)
    return "  \(padded)\(right)\n"
  }
}
