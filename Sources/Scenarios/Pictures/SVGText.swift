/// Building SVG text by hand, deterministically: coordinates are integers in tenths of a pixel,
/// printed with integer arithmetic (`123.4`), so no floating-point formatting can differ between
/// machines.
enum SVGText {
  /// Tenths of a pixel as an SVG number: `1234` → `123.4`, `1230` → `123`.
  static func n(_ v: Int) -> String {
    let sign = v < 0 ? "-" : ""
    let m = v.magnitude
    return m % 10 == 0 ? "\(sign)\(m / 10)" : "\(sign)\(m / 10).\(m % 10)"
  }

  /// Escapes text for element content and attribute values.
  static func escape(_ s: String) -> String {
    var out = ""
    out.reserveCapacity(s.utf8.count)
    for ch in s.unicodeScalars {
      switch ch {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&apos;"
      case "\n", "\t": out += " "
      default:
        // Control characters are not allowed in XML 1.0.
        if ch.value < 0x20 { out += " " } else { out.unicodeScalars.append(ch) }
      }
    }
    return out
  }

  /// Estimated width of `s` in tenths of a pixel at `size` px: 0.6 em per character, exact for
  /// the monospace labels and generous for sans-serif text.
  static func width(_ s: String, size: Int) -> Int { s.count * size * 6 }

  /// Greedy word wrap to at most `columns` characters per line.
  static func wrap(_ text: String, columns: Int) -> [String] {
    var lines: [String] = []
    var line = ""
    for word in text.split(separator: " ", omittingEmptySubsequences: true) {
      if line.isEmpty {
        line = String(word)
      } else if line.count + 1 + word.count <= columns {
        line += " " + word
      } else {
        lines.append(line)
        line = String(word)
      }
    }
    if !line.isEmpty { lines.append(line) }
    return lines
  }
}
