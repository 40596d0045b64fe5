/// A small writer of SVG plots for the HTML report: integer pixel coordinates, text escaped,
/// every data mark counted. The root is `<svg class="plot" data-plot="NAME" data-marks="N">`:
/// `scripts/render-report` fails a page with a plot of no marks. A plot with nothing to draw is
/// not made at all — the page says in words that the data is absent.
struct SVGPlot {
  let name: String
  let width: Int
  let height: Int
  private(set) var body = ""
  /// Data marks drawn (bars, cells).
  private(set) var marks = 0

  init(name: String, width: Int, height: Int) {
    self.name = name
    self.width = width
    self.height = height
  }

  /// A data mark: a rectangle with its value as a tooltip.
  mutating func bar(x: Int, y: Int, width: Int, height: Int, fill: String, tooltip: String) {
    body +=
      "<rect class=\"mark\" x=\"\(x)\" y=\"\(y)\" width=\"\(max(width, 1))\" height=\"\(max(height, 1))\" fill=\"\(fill)\"><title>\(HTML.escape(tooltip))</title></rect>\n"
    marks += 1
  }

  /// A rectangle that is not data (an empty cell, a legend swatch).
  mutating func rect(x: Int, y: Int, width: Int, height: Int, fill: String, tooltip: String? = nil) {
    let title = tooltip.map { "<title>\(HTML.escape($0))</title>" } ?? ""
    body += "<rect x=\"\(x)\" y=\"\(y)\" width=\"\(width)\" height=\"\(height)\" fill=\"\(fill)\">\(title)</rect>\n"
  }

  mutating func line(x1: Int, y1: Int, x2: Int, y2: Int, stroke: String = "#8c959f") {
    body += "<line x1=\"\(x1)\" y1=\"\(y1)\" x2=\"\(x2)\" y2=\"\(y2)\" stroke=\"\(stroke)\" stroke-width=\"1\"/>\n"
  }

  /// Text at (x, y): `anchor` start, middle or end; `tooltip` for text cut short.
  mutating func text(_ s: String, x: Int, y: Int, anchor: String = "start", size: Int = 11, fill: String = "#1f2328", tooltip: String? = nil) {
    let title = tooltip.map { "<title>\(HTML.escape($0))</title>" } ?? ""
    body +=
      "<text x=\"\(x)\" y=\"\(y)\" text-anchor=\"\(anchor)\" font-size=\"\(size)\" fill=\"\(fill)\">\(title)\(HTML.escape(s))</text>\n"
  }

  /// A horizontal value axis from `x0` to `x1` at `y`, ticks at `ticks` (values up to `maximum`).
  mutating func horizontalAxis(x0: Int, x1: Int, y: Int, maximum: Int, label: (Int) -> String) {
    line(x1: x0, y1: y, x2: x1, y2: y)
    for tick in Self.ticks(maximum) {
      let x = x0 + (x1 - x0) * tick / max(maximum, 1)
      line(x1: x, y1: y, x2: x, y2: y + 4)
      text(label(tick), x: x, y: y + 16, anchor: "middle", size: 10, fill: "#59636e")
    }
  }

  /// A vertical value axis from `y0` (bottom) to `y1` (top) at `x`, with grid lines to `gridTo`.
  mutating func verticalAxis(x: Int, y0: Int, y1: Int, gridTo: Int, maximum: Int, label: (Int) -> String) {
    line(x1: x, y1: y0, x2: x, y2: y1)
    for tick in Self.ticks(maximum) {
      let y = y0 - (y0 - y1) * tick / max(maximum, 1)
      if tick > 0 { line(x1: x, y1: y, x2: gridTo, y2: y, stroke: "#eaeef2") }
      line(x1: x - 4, y1: y, x2: x, y2: y)
      text(label(tick), x: x - 6, y: y + 4, anchor: "end", size: 10, fill: "#59636e")
    }
  }

  /// The plot as an `<svg>` element, its title and description for screen readers.
  func rendered(title: String) -> String {
    "<svg class=\"plot\" data-plot=\"\(name)\" data-marks=\"\(marks)\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(width) \(height)\" width=\"\(width)\" height=\"\(height)\" role=\"img\" font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif\">\n<title>\(HTML.escape(title))</title>\n\(body)</svg>"
  }

  /// Tick values from 0 to at most `maximum`: steps of 1, 2 or 5 times a power of ten, at
  /// most six ticks.
  static func ticks(_ maximum: Int) -> [Int] {
    let step = step(maximum)
    return Array(stride(from: 0, through: maximum, by: step))
  }

  /// The tick step for values up to `maximum`.
  static func step(_ maximum: Int) -> Int {
    var base = 1
    while true {
      for multiple in [1, 2, 5] where maximum / (base * multiple) <= 5 { return base * multiple }
      base *= 10
    }
  }

  /// Where an axis for values up to `maximum` ends: the first tick at or above it.
  static func niceMaximum(_ maximum: Int) -> Int {
    guard maximum > 0 else { return 1 }
    let step = step(maximum)
    return (maximum + step - 1) / step * step
  }
}

/// Escaping for the page: text in elements and attribute values.
enum HTML {
  /// `&`, `<`, `>`, `"` and `'` as entities; a control character (other than a newline or a
  /// tab) or an invisible one that reorders text as U+FFFD, as the console shows them.
  static func escape(_ s: String) -> String {
    var out = ""
    out.reserveCapacity(s.utf8.count)
    for ch in s.unicodeScalars {
      switch ch {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&#39;"
      case "\n", "\t": out.unicodeScalars.append(ch)
      default:
        if ch.value < 0x20 || (0x7F...0x9F).contains(ch.value) || Self.invisible.contains(ch.value) {
          out += "\u{FFFD}"
        } else {
          out.unicodeScalars.append(ch)
        }
      }
    }
    return out
  }

  /// Marks that reorder or break a line (cli.md, Conventions).
  static let invisible: Set<UInt32> = [
    0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x2028, 0x2029,
  ]
}
