/// A JSON value with a small hand-written serializer. Object keys are always written sorted,
/// so the same value gives the same bytes in every process (Swift's `Dictionary` order does not).
///
///     let v: JSONValue = ["benchmark": "kernel", "results": [["pending": 16]]]
///     v.serialized()   // {"benchmark":"kernel","results":[{"pending":16}]}
package enum JSONValue: Hashable, Sendable {
  case null
  case bool(Bool)
  case int(Int64)
  case uint(UInt64)
  /// Written in Swift's shortest round-trip form; non-finite values are written as `null`.
  case double(Double)
  case string(String)
  case array([JSONValue])
  case object([String: JSONValue])

  /// Compact form (no spaces), or indented by two spaces with `pretty`.
  package func serialized(pretty: Bool = false) -> String {
    var out = ""
    if pretty { _writePretty(to: &out, indent: 0) } else { write(to: &out) }
    return out
  }

  /// Appends the compact form to `out`.
  package func write(to out: inout String) {
    switch self {
    case .null: out += "null"
    case .bool(let b): out += b ? "true" : "false"
    case .int(let i): out += String(i)
    case .uint(let u): out += String(u)
    case .double(let d): out += d.isFinite ? Self._format(d) : "null"
    case .string(let s): Self.writeString(s, to: &out)
    case .array(let items):
      out += "["
      for (i, item) in items.enumerated() {
        if i > 0 { out += "," }
        item.write(to: &out)
      }
      out += "]"
    case .object(let members):
      out += "{"
      for (i, key) in members.keys.sorted().enumerated() {
        if i > 0 { out += "," }
        Self.writeString(key, to: &out)
        out += ":"
        members[key]!.write(to: &out)
      }
      out += "}"
    }
  }

  func _writePretty(to out: inout String, indent: Int) {
    let pad = String(repeating: "  ", count: indent + 1)
    let closePad = String(repeating: "  ", count: indent)
    switch self {
    case .array(let items) where !items.isEmpty:
      out += "[\n"
      for (i, item) in items.enumerated() {
        out += pad
        item._writePretty(to: &out, indent: indent + 1)
        out += i + 1 < items.count ? ",\n" : "\n"
      }
      out += closePad + "]"
    case .object(let members) where !members.isEmpty:
      out += "{\n"
      let keys = members.keys.sorted()
      for (i, key) in keys.enumerated() {
        out += pad
        Self.writeString(key, to: &out)
        out += ": "
        members[key]!._writePretty(to: &out, indent: indent + 1)
        out += i + 1 < keys.count ? ",\n" : "\n"
      }
      out += closePad + "}"
    default:
      write(to: &out)
    }
  }

  static func _format(_ d: Double) -> String {
    if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
    return "\(d)"
  }

  /// Writes `s` as a JSON string literal (RFC 8259 escapes; other characters as UTF-8).
  package static func writeString(_ s: String, to out: inout String) {
    // Printable ASCII with neither quote nor backslash is written as it is (every scalar of it
    // would take the loop's last case): names, specs, paths and hashes, most of what is written.
    if s.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
      out += "\""
      out += s
      out += "\""
      return
    }
    out += "\""
    for scalar in s.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case _ where scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value <= 0x9F) || TerminalText.isInvisibleLayout(scalar):
        // Control characters (C0, DEL, C1) are escaped, so that no JSON we print can drive a
        // terminal; so are the invisible characters that reorder or break a line (the string
        // decodes the same).
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    out += "\""
  }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
  ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
  package init(stringLiteral value: String) { self = .string(value) }
  package init(integerLiteral value: Int64) { self = .int(value) }
  package init(booleanLiteral value: Bool) { self = .bool(value) }
  package init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
  package init(dictionaryLiteral elements: (String, JSONValue)...) {
    self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
  }
  package init(nilLiteral: ()) { self = .null }
}
