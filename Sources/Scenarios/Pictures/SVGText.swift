import Simulator

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

  /// Estimated width of `s` in tenths of a pixel at `size` px, on the generous side so that a
  /// background box or a gap to the next label is never too small: 0.6 em per character in a
  /// monospace font (1 em for a character outside ASCII, which may come from a fallback font);
  /// in a sans-serif font, per-character widths at or above DejaVu Sans's (wider than Helvetica
  /// or Arial), 10% more for bold.
  static func width(_ s: String, size: Int, mono: Bool = true, bold: Bool = false) -> Int {
    var em = 0  // thousandths of an em
    for ch in s.unicodeScalars {
      em += mono ? (ch.isASCII ? 600 : 1_000) : sansWidth(ch)
    }
    if bold { em = em * 11 / 10 }
    return (em * size * 10 + 999) / 1_000
  }

  /// A sans-serif character's advance in thousandths of an em, rounded up over the common fonts.
  static func sansWidth(_ ch: Unicode.Scalar) -> Int {
    guard ch.isASCII else { return 1_000 }
    switch ch {
    case "i", "j", "l", " ", ".", ",", ":", ";", "'", "!", "|", "f", "t", "r", "(", ")", "[", "]", "-": return 420
    case "m", "w", "M", "W", "%", "@": return 1_000
    case "+", "=", "<", ">", "~", "#", "&": return 840
    case "A"..."Z": return 800
    default: return 650
    }
  }

  /// Greedy word wrap to at most `columns` characters per line.
  static func wrap(_ text: String, columns: Int) -> [String] { TextWrap.greedy(text, columns: columns) }

  /// Greedy word wrap of sans-serif text at `size` px to lines of at most `width` tenths of a
  /// pixel, as estimated by ``width(_:size:mono:bold:)`` (a longer word gets a line of its own).
  static func wrap(_ text: String, width: Int, size: Int) -> [String] {
    var lines: [String] = []
    var line = ""
    for word in text.split(separator: " ", omittingEmptySubsequences: true) {
      if line.isEmpty {
        line = String(word)
      } else if Self.width(line + " " + word, size: size, mono: false) <= width {
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
