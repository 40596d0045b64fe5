import Replica
@_spi(Kernel) import Simulator

/// A problem found while reading one word: a message and a scalar offset in the line.
struct _WordError: Error {
  var offset: Int
  var message: String
}

extension ScenarioParsePart {
  /// The latest time a timeline line, a clock skew or a clock jump may name.
  static var maxTime: SimDuration { .days(3650) }

  /// `[A-Za-z][A-Za-z0-9_-]*`
  static func isIdentifier(_ s: String) -> Bool {
    var first = true
    for u in s.unicodeScalars {
      let v = u.value
      let letter = (v >= 65 && v <= 90) || (v >= 97 && v <= 122)
      if first {
        guard letter else { return false }
        first = false
      } else {
        guard letter || (v >= 48 && v <= 57) || v == 95 || v == 45 else { return false }
      }
    }
    return !first
  }

  static func isDigit(_ u: Unicode.Scalar) -> Bool { u.value >= 48 && u.value <= 57 }

  /// Checks a name; reports and returns `false` when it is not an identifier.
  mutating func checkName(_ lineIndex: Int, _ token: ScenarioToken, _ what: String) -> Bool {
    if token.isString {
      error(lineIndex, token, "\(what)s are bare words, not strings: write \(Self.quoted(token.text)) without quotes")
      return false
    }
    guard Self.isIdentifier(token.text) else {
      error(
        lineIndex, token, "'\(Self.quoted(token.text))' is not a valid \(what): names start with a letter and go on with letters, digits, '_' or '-'")
      return false
    }
    return true
  }

  // MARK: - Durations and numbers

  /// Parses a duration word at `offset` of the line.
  static func duration(_ text: String, at offset: Int, allowSign: Bool = false) -> Result<SimDuration, _WordError> {
    if text.unicodeScalars.count > 40 {
      return .failure(_WordError(offset: offset, message: "'\(quoted(text))' is too long for a duration such as 250ms, 2s or 1.5s"))
    }
    switch SimDuration.parse(text, allowSign: allowSign) {
    case .success(let d): return .success(d)
    case .failure(let e): return .failure(_WordError(offset: offset + e.column, message: exactDurationLimit(e.message)))
    }
  }

  /// How `SimDuration.parse` says that a duration does not fit in 64 bits of nanoseconds.
  static var roughDurationLimit: String { " (at most about 106,000 days)" }
  /// The limit it applies, exactly: the largest duration is `Int64.max` nanoseconds.
  static var durationLimit: String { ": at most 9223372036854775807ns (about 106751 days)" }

  /// A message about a duration with its limit stated exactly.
  static func exactDurationLimit(_ message: String) -> String {
    message.hasSuffix(roughDurationLimit) ? String(message.dropLast(roughDurationLimit.count)) + durationLimit : message
  }

  /// A duration whose magnitude is at most ``maxTime``.
  static func boundedDuration(_ text: String, at offset: Int, allowSign: Bool, what: String) -> Result<SimDuration, _WordError> {
    // Worded only when needed: every `at` line comes here.
    var beyond: _WordError { _WordError(offset: offset, message: "\(what) \(quoted(text)) is beyond the limit of \(maxTime)") }
    switch duration(text, at: offset, allowSign: allowSign) {
    case .success(let d): return d.nanoseconds.magnitude <= maxTime.nanoseconds.magnitude ? .success(d) : .failure(beyond)
    // Too long for 64 bits is beyond the limit too.
    case .failure(let e) where e.message.hasSuffix(durationLimit): return .failure(beyond)
    case .failure(let e): return .failure(e)
    }
  }

  /// Reports a failed result and returns its value.
  mutating func value<T>(_ lineIndex: Int, _ result: Result<T, _WordError>) -> T? {
    switch result {
    case .success(let v): return v
    case .failure(let e):
      error(lineIndex, e.offset, e.message)
      return nil
    }
  }

  /// `1%`, `0.5%`, as an exact fraction in lowest terms (so that it prints and parses back equal).
  static func percent(_ text: String) -> Probability? {
    guard text.unicodeScalars.count <= 16, let p = Probability.parsePercent(text) else { return nil }
    var a = p.numerator
    var b = p.denominator
    while b != 0 { (a, b) = (b, a % b) }
    let g = max(a, 1)
    return Probability(p.numerator / g, outOf: p.denominator / g)
  }

  // MARK: - Literals

  /// Reads a literal: a string token, or a word (`42`, `-3`, `true`, `1.5s`, `n1`).
  static func literal(_ text: String, isString: Bool, at offset: Int) -> Result<Literal, _WordError> {
    if isString { return .success(.string(text)) }
    if text == "true" { return .success(.bool(true)) }
    if text == "false" { return .success(.bool(false)) }
    let scalars = Array(text.unicodeScalars)
    guard let first = scalars.first else {
      return .failure(_WordError(offset: offset, message: "expected a value"))
    }
    let signed = first == "-" && scalars.count > 1 && isDigit(scalars[1])
    if first == "0", scalars.count > 1, scalars[1] == "x" || scalars[1] == "X" {
      return bytes(scalars, at: offset)
    }
    if isDigit(first) || signed {
      if scalars.dropFirst(signed ? 1 : 0).allSatisfy(isDigit) {
        guard let n = Int64(text) else {
          return .failure(
            _WordError(
              offset: offset,
              message: "number \(quoted(text)) does not fit in 64 bits: write a whole number from \(Int64.min) to \(Int64.max)"))
        }
        return .success(.int(n))
      }
      if isDecimalNumber(scalars.dropFirst(signed ? 1 : 0)) {
        guard scalars.count <= 64, let d = Double(text), d.isFinite else {
          return .failure(
            _WordError(
              offset: offset,
              message:
                "number \(quoted(String(text.prefix(64)))) is too large for a double: write one whose magnitude is at most \(Double.greatestFiniteMagnitude) (64 characters at most)"
            ))
        }
        return .success(.double(d))
      }
      return duration(text, at: offset).map { .duration($0) }
    }
    if isIdentifier(text) { return .success(.identifier(text)) }
    if text.hasPrefix("asset(") || text.hasPrefix("bytes(") {
      return .failure(
        _WordError(
          offset: offset,
          message:
            "\(text.prefix(5))(\"NAME\", SIZE) values are written in create and set lines only; an expect line cannot compare one (expect no missing-asset checks that every device has its assets)"
        ))
    }
    return .failure(
      _WordError(
        offset: offset,
        message:
          "expected a value: a \"string\", a number such as 42 or 3.5, true or false, a duration such as 2s, bytes such as 0x1f, or a record id; found '\(quoted(text))'"
      ))
  }

  /// The most bytes a `bytes` literal holds: a `CKRecord` holds at most 1 MB.
  static var maximumBytesLiteral: Int { 1_000_000 }

  /// `0x` and two hex digits a byte (either case): `0x`, `0x89504E47`.
  static func bytes(_ scalars: [Unicode.Scalar], at offset: Int) -> Result<Literal, _WordError> {
    let digits = scalars.dropFirst(2)
    func nibble(_ u: Unicode.Scalar) -> UInt8? {
      switch u.value {
      case 48...57: UInt8(u.value - 48)
      case 97...102: UInt8(u.value - 87)
      case 65...70: UInt8(u.value - 55)
      default: nil
      }
    }
    if scalars[1] == "X" {
      return .failure(_WordError(offset: offset + 1, message: "write bytes with a lowercase '0x', as in 0x1f"))
    }
    if let bad = digits.firstIndex(where: { nibble($0) == nil }) {
      return .failure(
        _WordError(
          offset: offset + bad,
          message: "'\(quoted(String(scalars[bad])))' is not a hex digit; bytes are written 0x and two hex digits a byte, as in 0x1f"))
    }
    guard digits.count % 2 == 0 else {
      return .failure(
        _WordError(
          offset: offset,
          message:
            "bytes take two hex digits each, and \(quoted(String(String.UnicodeScalarView(scalars)))) has an odd number (\(digits.count)): write a leading 0, as in 0x0f for 0xf"
        ))
    }
    guard digits.count / 2 <= maximumBytesLiteral else {
      return .failure(
        _WordError(
          offset: offset,
          message: "a bytes value holds at most \(maximumBytesLiteral) bytes (a CKRecord holds 1 MB); this one has \(digits.count / 2)"))
    }
    var out: [UInt8] = []
    out.reserveCapacity(digits.count / 2)
    var high: UInt8?
    for u in digits {
      let n = nibble(u)!
      if let h = high {
        out.append(h << 4 | n)
        high = nil
      } else {
        high = n
      }
    }
    return .success(.bytes(out))
  }

  /// `12.5`, `3e8`, `1.5e-3`, `2E+4`: digits, then a fraction, an exponent or both (no sign:
  /// the caller has taken it).
  static func isDecimalNumber(_ scalars: ArraySlice<Unicode.Scalar>) -> Bool {
    var k = scalars.startIndex
    let end = scalars.endIndex
    func digits() -> Bool {
      let start = k
      while k < end, isDigit(scalars[k]) { k += 1 }
      return k > start
    }
    guard digits() else { return false }
    var marked = false
    if k < end, scalars[k] == "." {
      k += 1
      guard digits() else { return false }
      marked = true
    }
    if k < end, scalars[k] == "e" || scalars[k] == "E" {
      k += 1
      if k < end, scalars[k] == "+" || scalars[k] == "-" { k += 1 }
      guard digits() else { return false }
      marked = true
    }
    return marked && k == end
  }

  /// Reads a content literal whose head word (`asset(` or `bytes(`) is at `offset`, its
  /// remaining tokens from `k` on: `asset("IMG_0042.heic", 3MB)` or `bytes("body-v3",1.2MB)` —
  /// a name in quotes right after the parenthesis, a comma, a size (decimal units), a closing
  /// parenthesis. Returns the literal or the error, and the index past the tokens it took (on an
  /// error, past the token that closes it, when one does).
  static func contentLiteral(_ head: String, at offset: Int, tokens t: [ScenarioToken], from k: Int) -> (Result<Literal, _WordError>, next: Int) {
    let isAsset = head == "asset("
    let usage = isAsset ? "asset(\"IMG_0042.heic\", 3MB)" : "bytes(\"body-v3\", 1.2MB)"
    func closing(from j: Int) -> Int {
      var j = j
      while j < t.count {
        if t[j].isWord, t[j].text.hasSuffix(")") { return j + 1 }
        j += 1
      }
      return j
    }
    func fail(_ at: Int, _ message: String, next: Int) -> (Result<Literal, _WordError>, next: Int) {
      (.failure(_WordError(offset: at, message: message + "; write \(usage)")), next)
    }
    guard k < t.count, t[k].isString, t[k].glued else {
      return fail(offset + head.unicodeScalars.count, "expected the content's name in quotes right after '\(head)'", next: closing(from: k))
    }
    let name = t[k].text
    guard !name.isEmpty else {
      return fail(t[k].start, "the content's name cannot be empty: it is the content's identity", next: closing(from: k + 1))
    }
    guard k + 1 < t.count, t[k + 1].isWord, t[k + 1].glued, t[k + 1].text.hasPrefix(",") else {
      return fail(t[k].end, "expected ',' and a size after the name", next: closing(from: k + 1))
    }
    var sizeToken = t[k + 1]
    var sizeText = String(sizeToken.text.dropFirst())
    var sizeOffset = sizeToken.start + 1
    var next = k + 2
    if sizeText.isEmpty {
      guard k + 2 < t.count, t[k + 2].isWord else { return fail(sizeToken.end, "expected a size such as 3MB after ','", next: closing(from: k + 2)) }
      sizeToken = t[k + 2]
      sizeText = sizeToken.text
      sizeOffset = sizeToken.start
      next = k + 3
    }
    guard sizeText.hasSuffix(")") else {
      return fail(sizeToken.end, "expected ')' after the size", next: closing(from: next))
    }
    sizeText.removeLast()
    switch ByteCount.parse(sizeText) {
    case .failure(let e): return (.failure(_WordError(offset: sizeOffset, message: e.message)), next)
    case .success(let size): return (.success(.content(name: name, size: size, isAsset: isAsset)), next)
    }
  }

  /// What to write instead, when a literal does not fit a field.
  static func kindHint(_ field: String, _ kind: FieldKind) -> String {
    switch kind {
    case .string: "\(field) is a string; write \"…\""
    case .text: "\(field) is text; write \"…\""
    case .int: "\(field) is an int; write a whole number such as 42"
    case .double: "\(field) is a double; write a number such as 3.5, -0.25, 1e3 or 42"
    case .bool: "\(field) is a bool; write true or false"
    case .date: "\(field) is a date; write a time from the start such as 2s"
    case .bytes:
      "\(field) is bytes; write 0x and two hex digits a byte, such as 0x89504e47 (0x for none), or content by size such as bytes(\"body-v3\", 1.2MB)"
    case .asset: "\(field) is an asset; write asset(\"NAME\", SIZE), such as asset(\"IMG_0042.heic\", 3MB)"
    case .ref(let type): "\(field) is a ref to \(type); write the id of a \(type) record"
    }
  }

  /// A whole number as a double, when the double is exactly that number (every one of at most
  /// 2^53 in magnitude, and some larger).
  static func double(exactly n: Int64) -> Double? { Double(exactly: n) }

  /// Why a whole number does not fit a double field.
  static func inexactDouble(_ n: Int64) -> String {
    "\(n) has no exact double (a double holds whole numbers exactly up to 9007199254740992); write it as a double, such as \(Literal.spelled(Double(n)))"
  }

  /// A field's default value from its literal (`nil` when it does not fit; then it is reported).
  mutating func defaultValue(_ literal: Literal, _ field: FieldSpec, _ lineIndex: Int, at offset: Int) -> Value? {
    switch (field.kind, literal) {
    case (.ref, _):
      error(lineIndex, offset, "a ref field cannot have a default; remove '= \(Self.quoted(literal.description))'")
      return nil
    case (.asset, _):
      error(lineIndex, offset, "an asset field cannot have a default (a file is written by a device); remove '= \(Self.quoted(literal.description))'")
      return nil
    case (.string, .string(let s)): return .string(s)
    case (.text, .string(let s)): return .text(TextValue(s, by: 0))
    case (.int, .int(let n)): return .int(n)
    case (.double, .double(let d)): return .double(d)
    case (.double, .int(let n)):
      guard let d = Self.double(exactly: n) else {
        error(lineIndex, offset, Self.inexactDouble(n))
        return nil
      }
      return .double(d)
    case (.bool, .bool(let b)): return .bool(b)
    case (.date, .duration(let d)): return .date(d.nanoseconds)
    case (.bytes, .bytes(let b)): return .bytes(b)
    default:
      error(lineIndex, offset, Self.kindHint(field.name, field.kind))
      return nil
    }
  }

}

extension TimelineParser {
  /// Checks that a literal fits a field (a `ref` must name a record of the right type created in
  /// this file); reports and returns `false` when it does not.
  @discardableResult
  mutating func checkFits(_ literal: Literal, _ field: FieldSpec, _ lineIndex: Int, at offset: Int) -> Bool {
    switch (field.kind, literal) {
    case (.string, .string), (.text, .string), (.int, .int), (.bool, .bool), (.date, .duration), (.double, .double), (.bytes, .bytes):
      return true
    case (.asset, .content(_, _, true)), (.bytes, .content(_, _, false)):
      return true
    case (.double, .int(let n)):
      guard Self.double(exactly: n) != nil else {
        error(lineIndex, offset, Self.inexactDouble(n))
        return false
      }
      return true
    case (.ref(let target), .identifier(let id)):
      guard let created = creates[id] else {
        error(lineIndex, offset, unknownRecordMessage(id))
        return false
      }
      guard created.type == target else {
        error(lineIndex, offset, "\(field.name) is a ref to \(target), but '\(id)' is a \(Self.quoted(created.type))")
        return false
      }
      return true
    default:
      error(lineIndex, offset, Self.kindHint(field.name, field.kind))
      return false
    }
  }

  // MARK: - Records and fields

  func unknownRecordMessage(_ id: String) -> String {
    "unknown record '\(Self.quoted(id))'" + didYouMean(id, createdIDs, else: "; no 'create' line makes it")
  }

  /// The type of a created record: `nil` (reported) when no line creates it; `.some(nil)` when
  /// its `create` names an unknown type (reported there).
  mutating func recordType(_ id: String, _ lineIndex: Int, at offset: Int) -> RecordType?? {
    guard let created = creates[id] else {
      error(lineIndex, offset, unknownRecordMessage(id))
      return nil
    }
    return .some(types.first { $0.name == created.type })
  }

  /// A field of a type; reports an unknown one.
  mutating func field(_ name: String, of type: RecordType, _ lineIndex: Int, at offset: Int) -> FieldSpec? {
    if let index = type.fieldIndex(named: name) { return type.fields[index] }
    let broken = brokenFields[type.name] ?? []
    if broken.contains(name) { return nil }
    let names = type.fields.map(\.name) + broken
    let list = names.isEmpty ? "; \(type.name) has no fields" : (names.count <= 12 ? "; its fields are " + names.joined(separator: ", ") : "")
    error(lineIndex, offset, "unknown field '\(Self.quoted(name))' of \(type.name)" + didYouMean(name, names, else: list))
    return nil
  }

  /// Splits `ID.field` (scalar offsets of both parts in the line).
  mutating func idAndField(_ lineIndex: Int, _ token: ScenarioToken, usage: String)
    -> (id: String, idOffset: Int, field: String, fieldOffset: Int)?
  {
    let scalars = Array(token.text.unicodeScalars)
    guard token.isWord, let dot = scalars.firstIndex(of: ".") else {
      error(lineIndex, token, "expected ID.field, as in '\(usage)'; found \(Self.shown(token))")
      return nil
    }
    let id = String(String.UnicodeScalarView(scalars[..<dot]))
    let field = String(String.UnicodeScalarView(scalars[(dot + 1)...]))
    guard Self.isIdentifier(id) else {
      error(lineIndex, token, "expected ID.field, as in '\(usage)'; '\(Self.quoted(id))' is not a record id")
      return nil
    }
    guard Self.isIdentifier(field) else {
      error(lineIndex, token.start + dot + 1, "expected a field name after '\(id).', as in '\(usage)'")
      return nil
    }
    return (id, token.start, field, token.start + dot + 1)
  }
}
