import Foundation

/// The one way sim-cli reads a number from the command line: decimal digits only (no sign, no
/// spaces, no `0x`), within a range, or a usage error that names the range.
enum Count {
  /// `text` as a whole number in `range`, or nil.
  static func parse(_ text: String, in range: ClosedRange<UInt64>) -> UInt64? {
    // Digits only; leading zeros do not count against the 20 digits of a UInt64
    // (`000000000000000000001` is 1).
    guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
    let significant = text.drop { $0 == "0" }
    guard significant.utf8.count <= 20, let n = significant.isEmpty ? 0 : UInt64(significant) else { return nil }
    return range.contains(n) ? n : nil
  }

  /// The reason printed when `parse` fails.
  static func expected(_ range: ClosedRange<UInt64>) -> String {
    range.upperBound == .max
      ? "expected a whole number from \(range.lowerBound) up"
      : "expected a whole number from \(range.lowerBound) to \(range.upperBound)"
  }

  /// The largest `--jobs`: more threads than this only contend.
  static let maxJobs: UInt64 = 256
}

/// Reads an integer option with a range check, reporting a usage error itself.
enum IntegerOption {
  static func parse(
    _ args: ParsedArguments, _ name: String, default value: UInt64, in range: ClosedRange<UInt64>, spec: CommandSpec, console: Console
  ) -> UInt64? {
    guard let text = args.value(name) else { return value }
    guard let n = Count.parse(text, in: range) else {
      console.err(UsageError.invalidValue(option: name, value: text, reason: Count.expected(range), suggestion: nil).render(command: spec))
      return nil
    }
    return n
  }

  /// The same, throwing the usage exit instead of returning nil.
  static func require(
    _ args: ParsedArguments, _ name: String, default value: UInt64, in range: ClosedRange<UInt64>, spec: CommandSpec, console: Console
  ) throws(CommandExit) -> UInt64 {
    guard let n = parse(args, name, default: value, in: range, spec: spec, console: console) else { throw CommandExit(code: .usage) }
    return n
  }

  /// `--jobs N`: 1 to 256, the core count by default.
  static func jobs(_ args: ParsedArguments, spec: CommandSpec, console: Console) throws(CommandExit) -> Int {
    Int(
      try require(args, "--jobs", default: UInt64(ProcessInfo.processInfo.activeProcessorCount), in: 1...Count.maxJobs, spec: spec, console: console))
  }
}

/// `A..B` (inclusive) or a single seed, digits only.
struct SeedRange: Hashable, Sendable {
  var lower: UInt64
  var upper: UInt64

  /// `A..B`, `N` (one seed), or with `open` also `A..` (from A on, for a campaign that `--time`
  /// bounds).
  static func parse(_ text: String, open: Bool = false) -> SeedRange? {
    let parts = text.components(separatedBy: "..")
    if parts.count == 1, let n = Count.parse(parts[0], in: 0...UInt64.max) { return SeedRange(lower: n, upper: n) }
    if open, parts.count == 2, parts[1].isEmpty, let a = Count.parse(parts[0], in: 0...UInt64.max) { return SeedRange(lower: a, upper: UInt64.max) }
    guard parts.count == 2, let a = Count.parse(parts[0], in: 0...UInt64.max), let b = Count.parse(parts[1], in: 0...UInt64.max), a <= b else {
      return nil
    }
    return SeedRange(lower: a, upper: b)
  }
}
