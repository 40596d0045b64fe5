/// Where a line stops being JSON: a small scanner of RFC 8259's syntax, so that `sim-cli report`
/// can say `FILE:LINE:COLUMN` and what it expected, which `JSONDecoder`'s errors do not. It also
/// notes where each key of the top-level object starts, to point at a value of the wrong type.
///
/// Nesting deeper than ``maxDepth`` is refused before any decoder sees the line: a record is two
/// levels deep, and a line of a million `[` must cost nothing but a diagnostic.
struct JSONSyntax {
  /// What went wrong, and at which byte of the line.
  struct Problem: Error, Equatable {
    /// The byte offset from the start of the line.
    var offset: Int
    /// `expected ':' after a key, found '}'`.
    var message: String
    /// The line ended inside a value: what a campaign stopped mid-write leaves.
    var atEnd = false
  }

  /// A record nests two levels; anything past this is not one.
  static let maxDepth = 16

  private let bytes: [UInt8]
  private var index = 0
  /// The top-level object's keys and the offset of each one's value, in line order.
  private(set) var keys: [(key: String, offset: Int)] = []

  /// Scans `line` (without its newline). Throws the first problem; returns the top-level keys
  /// with where their values start (empty when the line is not an object).
  static func check(_ line: ArraySlice<UInt8>) throws(Problem) -> [(key: String, offset: Int)] {
    var scanner = JSONSyntax(bytes: Array(line))
    try scanner.skipSpace()
    try scanner.value(depth: 0)
    try scanner.skipSpace()
    if scanner.index < scanner.bytes.count {
      throw Problem(
        offset: scanner.index,
        message:
          "a second value after the first (\(scanner.describe(scanner.index))): two lines joined into one, as when a file that does not end with a newline is concatenated with another"
      )
    }
    return scanner.keys
  }

  private init(bytes: [UInt8]) { self.bytes = bytes }

  private func describe(_ at: Int) -> String {
    guard at < bytes.count else { return "the end of the line" }
    let byte = bytes[at]
    if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
    if byte == 0x20 { return "a space" }
    return "byte 0x" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
  }

  private func problem(_ expected: String) -> Problem {
    if index >= bytes.count { return Problem(offset: index, message: "the line ends where \(expected) should be", atEnd: true) }
    return Problem(offset: index, message: "expected \(expected), found \(describe(index))")
  }

  private mutating func skipSpace() throws(Problem) {
    while index < bytes.count, [0x20, 0x09, 0x0D].contains(bytes[index]) { index += 1 }
  }

  private mutating func expect(_ byte: UInt8, _ what: String) throws(Problem) {
    try skipSpace()
    guard index < bytes.count, bytes[index] == byte else { throw problem(what) }
    index += 1
  }

  private mutating func value(depth: Int) throws(Problem) {
    try skipSpace()
    guard index < bytes.count else { throw problem("a value") }
    switch bytes[index] {
    case UInt8(ascii: "{"):
      guard depth < Self.maxDepth else { throw Problem(offset: index, message: "nested more than \(Self.maxDepth) deep") }
      index += 1
      try skipSpace()
      if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
        index += 1
        return
      }
      while true {
        try skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw problem("a key in double quotes") }
        let key = try string()
        try expect(UInt8(ascii: ":"), "':' after a key")
        try skipSpace()
        if depth == 0 { keys.append((key, index)) }
        try value(depth: depth + 1)
        try skipSpace()
        guard index < bytes.count else { throw problem("',' or '}'") }
        if bytes[index] == UInt8(ascii: ",") {
          index += 1
          continue
        }
        guard bytes[index] == UInt8(ascii: "}") else { throw problem("',' or '}'") }
        index += 1
        return
      }
    case UInt8(ascii: "["):
      guard depth < Self.maxDepth else { throw Problem(offset: index, message: "nested more than \(Self.maxDepth) deep") }
      index += 1
      try skipSpace()
      if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
        index += 1
        return
      }
      while true {
        try value(depth: depth + 1)
        try skipSpace()
        guard index < bytes.count else { throw problem("',' or ']'") }
        if bytes[index] == UInt8(ascii: ",") {
          index += 1
          continue
        }
        guard bytes[index] == UInt8(ascii: "]") else { throw problem("',' or ']'") }
        index += 1
        return
      }
    case UInt8(ascii: "\""):
      _ = try string()
    case UInt8(ascii: "t"): try literal("true")
    case UInt8(ascii: "f"): try literal("false")
    case UInt8(ascii: "n"): try literal("null")
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
    default:
      throw problem("a value")
    }
  }

  private mutating func literal(_ word: String) throws(Problem) {
    for byte in word.utf8 {
      guard index < bytes.count else { throw problem("'\(word)'") }
      guard bytes[index] == byte else { throw problem("'\(word)'") }
      index += 1
    }
  }

  private mutating func digits() -> Int {
    let start = index
    while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
    return index - start
  }

  private mutating func number() throws(Problem) {
    if bytes[index] == UInt8(ascii: "-") { index += 1 }
    guard index < bytes.count else { throw problem("a digit") }
    if bytes[index] == UInt8(ascii: "0") {
      index += 1
    } else if digits() == 0 {
      throw problem("a digit")
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      index += 1
      guard digits() > 0 else { throw problem("a digit after '.'") }
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
      index += 1
      if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
      guard digits() > 0 else { throw problem("a digit of the exponent") }
    }
  }

  /// A string, the opening quote at `index`; returns its text (escapes kept as written: keys of
  /// a record need none).
  private mutating func string() throws(Problem) -> String {
    index += 1
    let start = index
    while true {
      guard index < bytes.count else { throw problem("the closing '\"'") }
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        index += 1
        return text
      }
      if byte < 0x20 { throw Problem(offset: index, message: "\(describe(index)) inside a string (a control character must be escaped)") }
      if byte == UInt8(ascii: "\\") {
        index += 1
        guard index < bytes.count else { throw problem("an escape") }
        switch bytes[index] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
          UInt8(ascii: "r"), UInt8(ascii: "t"):
          index += 1
        case UInt8(ascii: "u"):
          index += 1
          for _ in 0..<4 {
            guard index < bytes.count else { throw problem("four hex digits after \\u") }
            guard bytes[index].isHexDigit else { throw problem("four hex digits after \\u") }
            index += 1
          }
        default:
          throw Problem(offset: index, message: "a backslash before \(describe(index)), which is no escape JSON knows")
        }
        continue
      }
      index += 1
    }
  }
}

extension UInt8 {
  fileprivate var isHexDigit: Bool {
    (self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9")) || (self >= UInt8(ascii: "a") && self <= UInt8(ascii: "f"))
      || (self >= UInt8(ascii: "A") && self <= UInt8(ascii: "F"))
  }
}

extension String {
  /// The string with `0`s in front up to `width` characters.
  fileprivate func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
