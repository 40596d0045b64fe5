@_spi(Kernel) import Simulator

/// Parses one subcommand's arguments against its ``CommandSpec``.
///
/// Accepts `--name value`, `--name=value`, flags, `--` (everything after it is positional), and
/// `-h`/`--help` anywhere (handled by the caller before parsing). Unknown options get a "did you
/// mean" among the command's own options; values with fixed choices are checked here.
enum ArgumentParser {
  static func parse(_ arguments: [String], as spec: CommandSpec) -> Result<ParsedArguments, UsageError> {
    var parsed = ParsedArguments(command: spec.name)
    var index = 0
    var onlyPositionals = false
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if onlyPositionals || !argument.hasPrefix("-") || argument == "-" || _looksNumeric(argument) {
        parsed.positionals.append(argument)
        continue
      }
      if argument == "--" {
        onlyPositionals = true
        continue
      }
      var name = argument
      var inlineValue: String?
      if let equals = argument.firstIndex(of: "=") {
        name = String(argument[..<equals])
        inlineValue = String(argument[argument.index(after: equals)...])
      }
      guard let option = spec.option(named: name) else {
        let names = spec.options.map(\.name) + ["--help"]
        return .failure(.unknownOption(name, suggestion: Suggestion.closest(to: name, in: names)))
      }
      guard let valueName = option.valueName else {
        if inlineValue != nil { return .failure(.flagTakesNoValue(name)) }
        parsed.flags.insert(name)
        continue
      }
      let value: String
      if let inlineValue {
        value = inlineValue
      } else if index < arguments.count, !arguments[index].hasPrefix("--") || _looksNumeric(arguments[index]) {
        value = arguments[index]
        index += 1
      } else {
        return .failure(.missingValue(option: name, valueName: valueName))
      }
      if !option.choices.isEmpty, !option.choices.contains(value) {
        return .failure(
          .invalidValue(
            option: name, value: value, reason: "expected one of \(option.choices.joined(separator: ", "))",
            suggestion: Suggestion.closest(to: value, in: option.choices)))
      }
      if parsed.values[name] != nil, !option.repeatable {
        return .failure(.repeatedOption(name))
      }
      parsed.values[name, default: []].append(value)
    }
    // Positional count.
    let required = spec.positionals.filter { !$0.optional }.count
    let variadic = spec.positionals.contains { $0.variadic }
    if parsed.positionals.count < required {
      return .failure(.missingArgument(spec.positionals[parsed.positionals.count].name))
    }
    if !variadic, parsed.positionals.count > spec.positionals.count {
      return .failure(.unexpectedArgument(parsed.positionals[spec.positionals.count]))
    }
    if !spec.subjects.isEmpty, let subject = parsed.positionals.first, !spec.subjects.contains(subject) {
      return .failure(.unknownSubject(subject, valid: spec.subjects, suggestion: Suggestion.closest(to: subject, in: spec.subjects)))
    }
    return .success(parsed)
  }

  /// `-5` or `-1.5s` is a value, not an option.
  static func _looksNumeric(_ s: String) -> Bool {
    guard s.count >= 2, s.hasPrefix("-") else { return false }
    let second = s[s.index(after: s.startIndex)]
    return second.isASCII && second.isNumber
  }
}
