/// What the parser found: options by name, flags, and positional arguments in order.
struct ParsedArguments: Sendable {
  var command: String
  var positionals: [String] = []
  var values: [String: [String]] = [:]
  var flags: Set<String> = []

  /// The value of a single-valued option, if given.
  func value(_ name: String) -> String? { values[name]?.last }
  func all(_ name: String) -> [String] { values[name] ?? [] }
  func has(_ name: String) -> Bool { flags.contains(name) || values[name] != nil }
}
