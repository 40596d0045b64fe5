/// A span of simulated time in whole nanoseconds, written the way scenario files write it:
/// `250ms`, `2s`, `1.5s`, `3m`, `2h`, `30d`.
///
///     let d = try SimDuration.parse("1.5s").get()
///     d.nanoseconds       // 1_500_000_000
///     d.description       // "1.5s"
///
/// Parsing and printing round-trip: `SimDuration.parse(d.description, allowSign: true) == d`
/// for every duration but `Int64.min` nanoseconds (printed, but too long to parse).
@frozen
public struct SimDuration: Hashable, Comparable, Sendable {
  /// The span in nanoseconds; negative for a span backwards (a clock skewed behind true time).
  public var nanoseconds: Int64

  /// A span of `nanoseconds`.
  @inlinable
  public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

  /// No time at all; prints as `0s`.
  public static let zero = SimDuration(nanoseconds: 0)

  /// `n` nanoseconds.
  @inlinable public static func nanoseconds(_ n: Int64) -> SimDuration { SimDuration(nanoseconds: n) }
  /// `n` microseconds. The product wraps on overflow instead of trapping (past about 292 years).
  @inlinable public static func microseconds(_ n: Int64) -> SimDuration { SimDuration(nanoseconds: n &* 1_000) }
  /// `n` milliseconds. The product wraps on overflow instead of trapping (past about 292 years).
  @inlinable public static func milliseconds(_ n: Int64) -> SimDuration { SimDuration(nanoseconds: n &* 1_000_000) }
  /// `n` seconds. The product wraps on overflow instead of trapping (past about 292 years).
  @inlinable public static func seconds(_ n: Int64) -> SimDuration { SimDuration(nanoseconds: n &* 1_000_000_000) }
  /// `n` minutes. The product wraps on overflow instead of trapping (past about 292 years).
  @inlinable public static func minutes(_ n: Int64) -> SimDuration { .seconds(n &* 60) }
  /// `n` hours. The product wraps on overflow instead of trapping (past about 292 years).
  @inlinable public static func hours(_ n: Int64) -> SimDuration { .seconds(n &* 3_600) }
  /// `n` days. The product wraps on overflow instead of trapping (past about 106,000 days).
  @inlinable public static func days(_ n: Int64) -> SimDuration { .seconds(n &* 86_400) }

  @inlinable
  public static func < (lhs: SimDuration, rhs: SimDuration) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

  /// Saturating sum.
  @inlinable
  public static func + (lhs: SimDuration, rhs: SimDuration) -> SimDuration {
    SimDuration(nanoseconds: _saturatingAdd(lhs.nanoseconds, rhs.nanoseconds))
  }

  /// Saturating difference.
  @inlinable
  public static func - (lhs: SimDuration, rhs: SimDuration) -> SimDuration {
    SimDuration(nanoseconds: _saturatingAdd(lhs.nanoseconds, rhs.nanoseconds == .min ? .max : -rhs.nanoseconds))
  }

  @inlinable
  public static prefix func - (d: SimDuration) -> SimDuration {
    SimDuration(nanoseconds: d.nanoseconds == .min ? .max : -d.nanoseconds)
  }

  /// Saturating product with an integer.
  @inlinable
  public static func * (lhs: SimDuration, rhs: Int64) -> SimDuration {
    let (p, overflow) = lhs.nanoseconds.multipliedReportingOverflow(by: rhs)
    if !overflow { return SimDuration(nanoseconds: p) }
    return SimDuration(nanoseconds: (lhs.nanoseconds < 0) == (rhs < 0) ? .max : .min)
  }
}

// MARK: - Units

extension SimDuration {
  /// A unit a duration can be written in, largest last.
  public enum Unit: String, CaseIterable, Sendable {
    case ns, us, ms, s, m, h, d

    /// Nanoseconds in one of this unit.
    public var nanoseconds: Int64 {
      switch self {
      case .ns: 1
      case .us: 1_000
      case .ms: 1_000_000
      case .s: 1_000_000_000
      case .m: 60_000_000_000
      case .h: 3_600_000_000_000
      case .d: 86_400_000_000_000
      }
    }
  }
}

// MARK: - Printing

extension SimDuration: CustomStringConvertible {
  /// The shortest exact spelling in the largest unit that needs at most three decimals:
  /// `250ms`, `1.5s`, `1.5m` (for 90 s), `30d`, `-2s`, `0s`.
  public var description: String {
    if nanoseconds == 0 { return "0s" }
    let negative = nanoseconds < 0
    // Int64.min has no positive counterpart; print it in nanoseconds.
    if nanoseconds == .min { return "\(nanoseconds)ns" }
    let magnitude = abs(nanoseconds)
    for unit in Unit.allCases.reversed() {
      let scale = unit.nanoseconds
      guard magnitude >= scale else { continue }
      // Exact with at most three decimals?
      let thousandth = scale / 1_000
      if thousandth > 0, magnitude % thousandth != 0 { continue }
      return (negative ? "-" : "") + Self._decimal(magnitude, scale: scale) + unit.rawValue
    }
    return (negative ? "-" : "") + "\(magnitude)ns"
  }

  /// Seconds with at least three decimals, more only when needed: `2.200s`, `0.00025s`.
  /// This is how reports print instants and spans.
  public var secondsDescription: String {
    let magnitude = nanoseconds.magnitude
    var fraction = magnitude % 1_000_000_000
    // Drop trailing zeros down to three decimals.
    var digits = 9
    while digits > 3, fraction % 10 == 0 {
      fraction /= 10
      digits -= 1
    }
    let text = String(fraction)
    let padded = String(repeating: "0", count: digits - text.count) + text
    return (nanoseconds < 0 ? "-" : "") + String(magnitude / 1_000_000_000) + "." + padded + "s"
  }

  /// For people: below a day, seconds rounded to the millisecond (`94.327s`, `0.000s` never
  /// hides a nonzero span: below half a millisecond it prints exactly, `0.00025s`); from a day
  /// on, days, hours, minutes and seconds with the zero parts left out (`40d 2h`,
  /// `40d 1m 5.2s`). Reports print instants and totals this way; ``description`` is the exact,
  /// parseable spelling.
  public var readable: String {
    let magnitude = nanoseconds.magnitude
    let sign = nanoseconds < 0 ? "-" : ""
    let day: UInt64 = 86_400_000_000_000
    let ms: UInt64 = 1_000_000
    if magnitude < day {
      if magnitude > 0, magnitude < ms / 2 { return secondsDescription }
      let rounded = (magnitude + ms / 2) / ms
      let fraction = rounded % 1_000
      // (One string appended to: reports print many instants.)
      var out = sign
      out += String(rounded / 1_000)
      out += fraction < 10 ? ".00" : fraction < 100 ? ".0" : "."
      out += String(fraction)
      out += "s"
      return out
    }
    var rest = (magnitude + ms / 2) / ms * ms
    var parts: [String] = []
    for (unit, name) in [(day, "d"), (3_600_000_000_000 as UInt64, "h"), (60_000_000_000 as UInt64, "m")] where rest >= unit {
      parts.append("\(rest / unit)\(name)")
      rest %= unit
    }
    if rest > 0 {
      let whole = rest / 1_000_000_000
      var fraction = String((rest % 1_000_000_000) / ms)
      if fraction == "0" {
        parts.append("\(whole)s")
      } else {
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        parts.append("\(whole).\(fraction)s")
      }
    }
    return sign + parts.joined(separator: " ")
  }

  /// `magnitude / scale` written with up to three decimals and no trailing zeros.
  static func _decimal(_ magnitude: Int64, scale: Int64) -> String {
    let whole = magnitude / scale
    let rest = magnitude % scale
    if rest == 0 { return String(whole) }
    var digits = ""
    var remainder = rest
    for _ in 0..<3 {
      remainder *= 10
      digits.append(Character(String(remainder / scale)))
      remainder %= scale
    }
    while digits.hasSuffix("0") { digits.removeLast() }
    return "\(whole).\(digits)"
  }
}

// MARK: - Parsing

extension SimDuration {
  /// Why a duration did not parse. `column` is a 0-based offset into the text given.
  public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong with the text, with the expected form or a suggested unit.
    public var message: String
    /// Where the problem starts: a 0-based offset in Unicode scalars into the text given.
    public var column: Int
    /// An error saying `message` about the text at `column`.
    public init(_ message: String, column: Int) {
      self.message = message
      self.column = column
    }
    public var description: String { message }
  }

  /// Parses `250ms`, `2s`, `1.5s`, `3m`, `2h`, `30d` (units `ns us µs ms s m h d`).
  /// With `allowSign`, a leading `+` or `-` is accepted (`+2s`, `-500ms`).
  ///
  /// - Complexity: O(*n*) in the length of `text`.
  public static func parse(_ text: String, allowSign: Bool = false) -> Result<SimDuration, ParseError> {
    let scalars = Array(text.unicodeScalars)
    var i = 0
    var negative = false
    if i < scalars.count, scalars[i] == "+" || scalars[i] == "-" {
      guard allowSign else {
        return .failure(ParseError("a duration here cannot have a sign; write '\(String(String.UnicodeScalarView(scalars[1...])))'", column: 0))
      }
      negative = scalars[i] == "-"
      i += 1
    }
    let digitsStart = i
    var whole: Int64 = 0
    var overflow = false
    while i < scalars.count, let d = _digit(scalars[i]) {
      let (m, o1) = whole.multipliedReportingOverflow(by: 10)
      let (a, o2) = m.addingReportingOverflow(d)
      overflow = overflow || o1 || o2
      whole = a
      i += 1
    }
    if i == digitsStart {
      if text.isEmpty || i >= scalars.count {
        return .failure(ParseError("expected a duration such as 250ms, 2s, 1.5s, 3m, 2h or 30d", column: i))
      }
      return .failure(ParseError("expected a number before the unit, as in 250ms, 2s or 1.5s", column: i))
    }
    var fractionDigits: [Int64] = []
    if i < scalars.count, scalars[i] == "." {
      i += 1
      while i < scalars.count, let d = _digit(scalars[i]) {
        fractionDigits.append(d)
        i += 1
      }
      if fractionDigits.isEmpty {
        return .failure(ParseError("expected digits after the decimal point", column: i))
      }
    }
    let unitStart = i
    let unitText = String(String.UnicodeScalarView(scalars[i...]))
    guard !unitText.isEmpty else {
      return .failure(ParseError("missing unit: write \(text)ms, \(text)s, \(text)m, \(text)h or \(text)d", column: unitStart))
    }
    let normalized = unitText == "µs" || unitText == "μs" ? "us" : unitText
    guard let unit = Unit(rawValue: normalized) else {
      let suggestion = _unitSuggestion(unitText)
      return .failure(
        ParseError(
          "unknown duration unit '\(unitText)'" + (suggestion.map { "; did you mean '\($0)'?" } ?? "; use ns, us, ms, s, m, h or d"),
          column: unitStart))
    }
    // Worded only when needed (every timeline line parses a duration).
    var tooLong: ParseError { ParseError("duration '\(text)' is too long (at most about 106,000 days)", column: digitsStart) }
    if overflow { return .failure(tooLong) }
    var (total, o) = whole.multipliedReportingOverflow(by: unit.nanoseconds)
    if o { return .failure(tooLong) }
    // Fraction: digits d1 d2 ... dk mean sum(di * 10^-i) units; it must be a whole number of ns.
    var scale = unit.nanoseconds
    for (index, digit) in fractionDigits.enumerated() {
      if scale % 10 != 0 {
        if digit != 0 || fractionDigits[index...].contains(where: { $0 != 0 }) {
          return .failure(ParseError("duration '\(text)' is finer than one nanosecond", column: digitsStart))
        }
        break
      }
      scale /= 10
      (total, o) = total.addingReportingOverflow(digit * scale)
      if o { return .failure(tooLong) }
    }
    return .success(SimDuration(nanoseconds: negative ? -total : total))
  }

  @inline(__always)
  static func _digit(_ s: Unicode.Scalar) -> Int64? {
    (s.value >= 48 && s.value <= 57) ? Int64(s.value - 48) : nil
  }

  static func _unitSuggestion(_ unit: String) -> String? {
    let aliases: [(String, String)] = [
      ("sec", "s"), ("secs", "s"), ("second", "s"), ("seconds", "s"), ("S", "s"),
      ("min", "m"), ("mins", "m"), ("minute", "m"), ("minutes", "m"), ("M", "m"),
      ("hr", "h"), ("hrs", "h"), ("hour", "h"), ("hours", "h"), ("H", "h"),
      ("day", "d"), ("days", "d"), ("D", "d"), ("MS", "ms"), ("Ms", "ms"), ("msec", "ms"),
      ("millis", "ms"), ("us", "us"), ("usec", "us"), ("micros", "us"), ("nsec", "ns"), ("nanos", "ns"),
    ]
    return aliases.first(where: { $0.0 == unit })?.1
  }
}
