import Replica
@_spi(Kernel) import Simulator

/// The kinds of text in a picture. Each is written out as presentation attributes (no style
/// sheet, no `paint-order`), which every converter reads; the class names stay as hooks.
enum TextRole: String {
  /// Title, subtitle, lane name, axis tick, intent label (monospace), window word (italic),
  /// other small word, legend key, legend anomaly text, badge number.
  case h, sub, lane, tick, m, w, k, lg, ax, badge

  var size: Int {
    switch self {
    case .h: 15
    case .sub, .ax: 12
    case .lane: 13
    case .tick, .w, .k: 10
    case .m, .lg, .badge: 11
    }
  }

  var weight: Int {
    switch self {
    case .h, .lane: 600
    case .badge: 700
    default: 400
    }
  }

  var mono: Bool { self == .m }

  var fill: String {
    switch self {
    case .sub, .tick, .w: TimelineStyle.muted
    case .badge: "#ffffff"
    default: TimelineStyle.ink
    }
  }
}

/// Colours and styles: one place, so the legend matches what is drawn.
enum TimelineStyle {
  static let sans = "-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"
  static let mono = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace"
  static let ink = "#1f2328"
  static let muted = "#59636e"
  static let blue = "#0969da"
  static let green = "#1a7f37"

  /// Message kinds: colour, dash pattern (the marker id is the kind's number).
  static let messages: [(kind: MessageKind, color: String, dash: String?)] = [
    (.push, "#0969da", nil),
    (.pushReply, "#0969da", "5 3"),
    (.fetch, "#1a7f37", nil),
    (.fetchReply, "#1a7f37", "5 3"),
    (.notify, "#8250df", "1.5 2.5"),
  ]
  static let red = "#cf222e"
  static let drop = "#bc4c00"

  static func message(_ kind: MessageKind) -> (color: String, dash: String?) {
    let m = messages.first { $0.kind == kind }!
    return (m.color, m.dash)
  }

  /// Server decisions: the word and the colour.
  static func store(_ outcome: WriteOutcome) -> (name: String, color: String) {
    switch outcome {
    case .saved: ("saved", "#59636e")
    case .conflict: ("conflict", "#bf8700")
    case .refused: ("refused: deleted", "#bf8700")
    case .deleted: ("deleted", "#1f2328")
    case .rejected: ("rejected", drop)
    case .failed: ("failed", "#bf8700")
    }
  }
}

extension TimelineDrawing {
  typealias S = SVGText

  static let bottomRow = 120

  /// The picture. The root sets `stroke="none"` (the default everywhere, said out loud for
  /// converters that stroke text and shapes otherwise) and the sans-serif font family.
  mutating func draw() -> String {
    out = ""
    taken = []
    let legend = legendHeight()
    let legendTop = lanesBottom + 250 + (bottomLabels.map(\.0.row).max() ?? 0) * Self.bottomRow
    let height = legendTop + legend
    out +=
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(S.n(width))\" height=\"\(S.n(height))\" viewBox=\"0 0 \(S.n(width)) \(S.n(height))\""
      + " stroke=\"none\" font-family=\"\(TimelineStyle.sans)\">\n"
    out += "<title>\(S.escape("\(report.scenario) — policy \(report.policy), seed \(report.seed)"))</title>\n"
    drawDefs()
    out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
    reserveLaidOutLabels()
    drawHeader()
    drawLanes()
    drawWindows()
    drawAxis()
    drawBreaks()
    drawBottomLabels()
    drawMessages()
    drawStores()
    // Links under the words and marks they run past; badges clear of both.
    drawAnomalyLinks()
    drawMarks()
    drawIntents()
    drawLegend(top: legendTop)
    out += "</svg>\n"
    return out
  }

  mutating func drawDefs() {
    out += "<defs>\n"
    for m in TimelineStyle.messages {
      out += "<marker id=\"h\(m.kind.rawValue)\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\">"
      out += "<path d=\"M0,1L10,5L0,9z\" fill=\"\(m.color)\"/></marker>\n"
    }
    out += "</defs>\n"
  }

  // MARK: Text

  /// The box a label takes: its estimated width (``SVGText/width(_:size:mono:bold:)``), one em
  /// above the baseline and a fifth of one below.
  static func box(_ text: String, _ role: TextRole, x: Int, y: Int, anchor: String? = nil, weight: Int? = nil) -> Box {
    let w = SVGText.width(text, size: role.size, mono: role.mono, bold: (weight ?? role.weight) >= 600)
    let x0 = anchor == "middle" ? x - w / 2 : anchor == "end" ? x - w : x
    return Box(x0: x0, y0: y - role.size * 10, x1: x0 + w, y1: y + role.size * 2)
  }

  /// A `<text>` with its font written out as attributes. With `backdrop`, a white box (85%
  /// opaque) goes behind it first, so lines under the label fade instead of crossing it: the
  /// plain way every converter draws, where a white outline (`paint-order: stroke`) is not.
  func text(
    _ role: TextRole, _ s: String, x: Int, y: Int, fill: String? = nil, weight: Int? = nil, anchor: String? = nil, extraClass: String? = nil,
    tooltip: String? = nil, backdrop: Bool = false
  ) -> String {
    var o = ""
    if backdrop {
      let b = Self.box(s, role, x: x, y: y, anchor: anchor, weight: weight)
      let top = y - role.size * 10 + 5
      o +=
        "<rect x=\"\(S.n(b.x0 - 15))\" y=\"\(S.n(top))\" width=\"\(S.n(b.x1 - b.x0 + 30))\" height=\"\(S.n(y + role.size * 2 + 5 - top))\" fill=\"#ffffff\" fill-opacity=\"0.85\"/>"
    }
    o += "<text class=\"\(role.rawValue)\(extraClass.map { " " + $0 } ?? "")\" x=\"\(S.n(x))\" y=\"\(S.n(y))\""
    if let anchor { o += " text-anchor=\"\(anchor)\"" }
    if role.mono { o += " font-family=\"\(TimelineStyle.mono)\"" }
    o += " font-size=\"\(role.size)\""
    let w = weight ?? role.weight
    if w != 400 { o += " font-weight=\"\(w)\"" }
    if role == .w { o += " font-style=\"italic\"" }
    o += " fill=\"\(fill ?? role.fill)\">"
    if let tooltip { o += "<title>\(S.escape(tooltip))</title>" }
    return o + S.escape(s) + "</text>"
  }

  /// Diagonal hatching inside a rectangle, drawn as plain lines (a `<pattern>` comes out solid
  /// black in some converters).
  static func hatch(x0: Int, y0: Int, x1: Int, y1: Int) -> String {
    var d = ""
    var c = x0 + y0 + 40
    while c < x1 + y1 {
      let a = max(x0, c - y1)
      let b = min(x1, c - y0)
      if a < b { d += "M\(S.n(a)),\(S.n(c - a))L\(S.n(b)),\(S.n(c - b))" }
      c += 85
    }
    return "<rect x=\"\(S.n(x0))\" y=\"\(S.n(y0))\" width=\"\(S.n(x1 - x0))\" height=\"\(S.n(y1 - y0))\" fill=\"#eef1f4\"/>"
      + (d.isEmpty ? "" : "<path d=\"\(d)\" stroke=\"#d0d7de\" stroke-width=\"1\"/>")
  }

  /// Marks the laid-out labels and the intents as taken, before anything is placed around them.
  mutating func reserveLaidOutLabels() {
    for lane in lanes {
      taken.append(Self.box(lane.name, .lane, x: 120, y: lane.line + 45))
      for (p, item) in nearLabels[lane.node] ?? [] { taken.append(Self.box(p.text, item.role, x: p.x, y: nearY(lane, row: p.row))) }
    }
    for i in history.intents {
      let lane = lanes[laneOf[Int(i.device)]]
      let x = axis.x(i.trueTime)
      taken.append(Box(x0: x - 90, y0: lane.line - 90, x1: x + 90, y1: lane.line + 90))
      if let p = intentLabels[i.id] { taken.append(Self.box(p.text, .m, x: p.x, y: labelY(lane, row: p.row))) }
    }
    for (p, item) in bottomLabels { taken.append(Self.box(p.text, item.role, x: p.x, y: bottomY(p.row))) }
  }

  /// The first of `candidates` whose box touches nothing taken; else the nearest free spot
  /// around the first, in steps of its box's size; else the first.
  func freeSpot(_ candidates: [(Int, Int)], box: (Int, Int) -> Box) -> (Int, Int) {
    func free(_ c: (Int, Int)) -> Bool { !taken.contains { $0.intersects(box(c.0, c.1)) } }
    if let c = candidates.first(where: free) { return c }
    let (x, y) = candidates[0]
    let b = box(x, y)
    let (w, h) = (b.x1 - b.x0 + 20, b.y1 - b.y0 + 20)
    for r in 1...8 {
      for (dx, dy) in [(0, -1), (0, 1), (-1, 0), (1, 0), (-1, -1), (1, -1), (-1, 1), (1, 1)] where free((x + dx * r * w, y + dy * r * h)) {
        return (x + dx * r * w, y + dy * r * h)
      }
    }
    return candidates[0]
  }

  mutating func drawHeader() {
    out += text(.h, report.scenario, x: 160, y: 240) + "\n"
    var sub = "policy \(report.policy) · seed \(report.seed) · found \(report.verdict) · \(report.converged ? "converged" : "not converged")"
    if !history.hasEvents { sub += " · no trace kept (run with the full trace for messages)" }
    out += text(.sub, sub, x: 160, y: 440) + "\n"
  }

  mutating func drawLanes() {
    for (i, lane) in lanes.enumerated() {
      let fill = lane.node == history.serverNode ? "#eef2f7" : (i % 2 == 0 ? "#ffffff" : "#f9fafb")
      out += "<rect x=\"0\" y=\"\(S.n(lane.top))\" width=\"\(S.n(width))\" height=\"\(S.n(lane.bottom - lane.top))\" fill=\"\(fill)\"/>\n"
    }
    out += "<line x1=\"0\" y1=\"\(S.n(lanesTop))\" x2=\"\(S.n(width))\" y2=\"\(S.n(lanesTop))\" stroke=\"#d0d7de\"/>\n"
    out += "<line x1=\"0\" y1=\"\(S.n(lanesBottom))\" x2=\"\(S.n(width))\" y2=\"\(S.n(lanesBottom))\" stroke=\"#d0d7de\"/>\n"
  }

  mutating func drawWindows() {
    for w in history.windows {
      let x0 = axis.x(w.start)
      let x1 = max(axis.x(w.end), x0 + 20)
      if w.kind == .settle {
        out +=
          "<rect x=\"\(S.n(x0))\" y=\"\(S.n(lanesTop))\" width=\"\(S.n(x1 - x0))\" height=\"\(S.n(lanesBottom - lanesTop))\" fill=\"#dafbe1\" fill-opacity=\"0.55\"/>\n"
        continue
      }
      let lane = lanes[laneOf[w.node]]
      let (y0, y1) = (lane.top + 20, lane.bottom - 20)
      switch w.kind {
      case .offline: out += Self.hatch(x0: x0, y0: y0, x1: x1, y1: y1) + "\n"
      default:
        let fill = w.kind == .down ? "#ffd8d3" : "#fff1b8"
        out += "<rect x=\"\(S.n(x0))\" y=\"\(S.n(y0))\" width=\"\(S.n(x1 - x0))\" height=\"\(S.n(y1 - y0))\" fill=\"\(fill)\"/>\n"
      }
    }
    for lane in lanes {
      out +=
        "<line x1=\"\(S.n(left - 100))\" y1=\"\(S.n(lane.line))\" x2=\"\(S.n(width - 100))\" y2=\"\(S.n(lane.line))\" stroke=\"#8c959f\" stroke-width=\"1\"/>\n"
      out += text(.lane, lane.name, x: 120, y: lane.line + 45) + "\n"
    }
  }

  /// Tick labels: the start of every busy stretch first, then round steps where they fit.
  mutating func drawAxis() {
    var spans: [(Int, Int)] = []
    var kept: [Int64] = []
    let ticks = axis.ticks
    for pass in [true, false] {
      for (t, start) in ticks where start == pass {
        let x = axis.x(VirtualTime(nanoseconds: t))
        let half = SVGText.width(TimeText.moment(t), size: TextRole.tick.size, mono: false) / 2
        guard !spans.contains(where: { x - half < $0.1 + 100 && x + half + 100 > $0.0 }) else { continue }
        spans.append((x - half, x + half))
        kept.append(t)
      }
    }
    for t in kept.sorted() {
      let x = axis.x(VirtualTime(nanoseconds: t))
      let label = TimeText.moment(t)
      out +=
        "<line x1=\"\(S.n(x))\" y1=\"\(S.n(lanesTop - 60))\" x2=\"\(S.n(x))\" y2=\"\(S.n(lanesBottom))\" stroke=\"#d8dee4\" stroke-width=\"0.6\"/>\n"
      out += text(.tick, label, x: x, y: lanesTop - 120, anchor: "middle") + "\n"
      taken.append(Self.box(label, .tick, x: x, y: lanesTop - 120, anchor: "middle"))
    }
  }

  /// Each idle gap: the lifelines interrupted by `//` (its length is written under the lanes).
  mutating func drawBreaks() {
    for b in axis.breaks {
      let mid = (b.x0 + b.x1) / 2
      out += "<g><title>\(S.escape("\(TimeText.gap(b.t1 - b.t0)) with nothing happening, left out"))</title>"
      for y in [lanesTop - 30] + lanes.map(\.line) {
        out += "<rect x=\"\(S.n(mid - 60))\" y=\"\(S.n(y - 20))\" width=\"12\" height=\"4\" fill=\"#ffffff\"/>"
        for dx in [-45, 25] {
          out +=
            "<line x1=\"\(S.n(mid + dx))\" y1=\"\(S.n(y + 50))\" x2=\"\(S.n(mid + dx + 20))\" y2=\"\(S.n(y - 50))\" stroke=\"#59636e\" stroke-width=\"1.2\"/>"
        }
      }
      out += "</g>\n"
    }
  }

  /// Baseline of a row under the lanes.
  func bottomY(_ row: Int) -> Int { lanesBottom + 120 + row * Self.bottomRow }

  /// The gap lengths and the start of settling, under the lanes.
  mutating func drawBottomLabels() {
    for (p, item) in bottomLabels {
      out += text(item.role, p.text, x: p.x, y: bottomY(p.row), fill: item.fill, tooltip: item.tooltip) + "\n"
    }
  }

  mutating func drawMessages() {
    for m in history.messages {
      let (color, dash) = TimelineStyle.message(m.kind)
      let from = lanes[laneOf[m.from]]
      let to = lanes[laneOf[m.to]]
      let xs = axis.x(m.sent)
      let dashAttr = dash.map { " stroke-dasharray=\"\($0)\"" } ?? ""
      for end in m.ends {
        let tip = messageTooltip(m, end)
        var xe = axis.x(end.time)
        var ye = to.line
        if end.droppedAtSend {
          xe = xs + 100
          ye = from.line + (to.line - from.line) * 3 / 10
        }
        let head = end.delivered ? " marker-end=\"url(#h\(m.kind.rawValue))\"" : ""
        out += "<g><title>\(S.escape(tip))</title>"
        out +=
          "<line x1=\"\(S.n(xs))\" y1=\"\(S.n(from.line))\" x2=\"\(S.n(xe))\" y2=\"\(S.n(ye))\" stroke=\"\(color)\" stroke-width=\"1.3\"\(dashAttr)\(head)/>"
        if !end.delivered {
          let c = TimelineStyle.drop
          out +=
            "<path d=\"M\(S.n(xe - 40)),\(S.n(ye - 40))L\(S.n(xe + 40)),\(S.n(ye + 40))M\(S.n(xe - 40)),\(S.n(ye + 40))L\(S.n(xe + 40)),\(S.n(ye - 40))\" stroke=\"\(c)\" stroke-width=\"2\"/>"
        }
        if end.duplicate {
          // Along the arrow, where no other word is.
          let spots = [6, 5, 7, 4, 8, 3].map { k in (xs + (xe - xs) * k / 10 + 40, from.line + (ye - from.line) * k / 10 + 35) }
          let (lx, ly) = freeSpot(spots) { Self.box("dup", .k, x: $0, y: $1) }
          taken.append(Self.box("dup", .k, x: lx, y: ly))
          out += text(.k, "dup", x: lx, y: ly, fill: color, backdrop: true)
        }
        out += "</g>\n"
      }
    }
  }

  /// A word beside the head of a reply that changes what the device does next.
  func messageNote(_ m: RunHistory.Message) -> String? {
    if m.tokenExpired { return "token expired" }
    let outcomes = m.results.map(\.outcome)
    if outcomes.contains(.conflict) { return "conflict" }
    if outcomes.contains(.refused) { return "refused" }
    return nil
  }

  func messageTooltip(_ m: RunHistory.Message, _ end: RunHistory.End) -> String {
    let route = "\(history.names.node(m.from)) → \(history.names.node(m.to))"
    let what = history.names.contents(m, in: history)
    let copy = end.duplicate ? " (duplicate copy)" : ""
    let fate = end.fate(from: history.names.node(m.from), to: history.names.node(m.to), at: TimeText.moment(end.time.nanoseconds))
    return "#\(m.seq) \(m.name) \(route)\(copy), sent at \(TimeText.moment(m.sent.nanoseconds)), \(fate)\(what.isEmpty ? "" : " — " + what)"
  }

  mutating func drawStores() {
    let server = lanes[laneOf[history.serverNode]]
    var lastX = Int.min
    var stack = 0
    for s in history.stores {
      let x = axis.x(s.time)
      stack = x == lastX ? stack + 1 : 0
      lastX = x
      let y = server.line + (stack % 2 == 0 ? 1 : -1) * ((stack + 1) / 2) * 90
      storeAt["\(s.seq):\(s.key)"] = (x, y)
      let (name, color) = TimelineStyle.store(s.outcome)
      let tip =
        "server: \(history.names.record(s.key)) from \(history.names.node(s.device)) (#\(s.seq)) at \(TimeText.moment(s.time.nanoseconds)): \(name)"
        + history.names.storeResult(s)
      out += "<g><title>\(S.escape(tip))</title><rect x=\"\(S.n(x - 35))\" y=\"\(S.n(y - 35))\" width=\"7\" height=\"7\" fill=\"\(color)\"/></g>\n"
      taken.append(Box(x0: x - 35, y0: y - 35, x1: x + 35, y1: y + 35))
    }
  }

  mutating func drawMarks() {
    for m in history.marks {
      let lane = lanes[laneOf[m.node]]
      let x = axis.x(m.time)
      switch m.kind {
      case .kill:
        out +=
          "<line x1=\"\(S.n(x))\" y1=\"\(S.n(lane.line - 110))\" x2=\"\(S.n(x))\" y2=\"\(S.n(lane.line + 110))\" stroke=\"#1f2328\" stroke-width=\"3\"/>\n"
      case .clockJump:
        out +=
          "<line x1=\"\(S.n(x))\" y1=\"\(S.n(lane.line - 60))\" x2=\"\(S.n(x))\" y2=\"\(S.n(lane.line + 60))\" stroke=\"#8250df\" stroke-width=\"2\"/>\n"
      case .purged:
        out += "<circle cx=\"\(S.n(x))\" cy=\"\(S.n(lane.line))\" r=\"4\" fill=\"#ffffff\" stroke=\"#1f2328\" stroke-width=\"1.2\"/>\n"
      case .condition, .share:
        out += "<circle cx=\"\(S.n(x))\" cy=\"\(S.n(lane.line))\" r=\"4\" fill=\"#bf8700\" stroke=\"#1f2328\" stroke-width=\"1.2\"/>\n"
      case .fact:
        out +=
          "<path d=\"M\(S.n(x)),\(S.n(lane.line - 50))L\(S.n(x + 50)),\(S.n(lane.line))L\(S.n(x)),\(S.n(lane.line + 50))L\(S.n(x - 50)),\(S.n(lane.line))z\" fill=\"\(TimelineStyle.drop)\"/>\n"
      }
    }
    for lane in lanes {
      for (p, item) in nearLabels[lane.node] ?? [] {
        out += text(item.role, p.text, x: p.x, y: nearY(lane, row: p.row), fill: item.fill, tooltip: item.tooltip, backdrop: true) + "\n"
      }
    }
  }

  /// Baseline of a near-side label row (towards the server; below the server's lifeline).
  func nearY(_ lane: Lane, row: Int) -> Int {
    lane.side <= 0 ? lane.line + 130 + row * Self.nearRowHeight : lane.line - 60 - row * Self.nearRowHeight
  }

  mutating func drawIntents() {
    for i in history.intents {
      let lane = lanes[laneOf[Int(i.device)]]
      let x = axis.x(i.trueTime)
      let bad = anomalyOf[i.id] != nil
      let violation = anomalyOf[i.id]?.contains { report.anomalies[$0 - 1].kind.isViolation } ?? false
      let hue = violation ? TimelineStyle.red : TimelineStyle.blue
      let fill = i.ignored != nil ? "#ffffff" : (bad ? hue : "#1f2328")
      let stroke = i.ignored != nil ? "#8c959f" : (bad ? hue : "#ffffff")
      var tip = history.names.describe(i) + " — device clock \(i.deviceTime)"
      if let why = i.ignored { tip += "; ignored: \(why)" }
      if let ks = anomalyOf[i.id] { tip += "; anomaly " + ks.map(String.init).joined(separator: ", ") }
      out += "<g><title>\(S.escape(tip))</title>"
      if bad { out += "<circle cx=\"\(S.n(x))\" cy=\"\(S.n(lane.line))\" r=\"8.5\" fill=\"none\" stroke=\"\(hue)\" stroke-width=\"1.6\"/>" }
      out += "<circle cx=\"\(S.n(x))\" cy=\"\(S.n(lane.line))\" r=\"4.5\" fill=\"\(fill)\" stroke=\"\(stroke)\" stroke-width=\"1.2\"/>"
      if let p = intentLabels[i.id] {
        let y = labelY(lane, row: p.row)
        if p.row > 0 {
          let y0 = lane.line + lane.side * 60
          let y1 = y + (lane.side < 0 ? 30 : -100)
          out += "<line x1=\"\(S.n(x))\" y1=\"\(S.n(y0))\" x2=\"\(S.n(x))\" y2=\"\(S.n(y1))\" stroke=\"#afb8c1\" stroke-width=\"0.8\"/>"
        }
        out += text(.m, p.text, x: p.x, y: y, fill: bad ? hue : nil, extraClass: bad ? (violation ? "bad" : "info") : nil, backdrop: true)
      }
      out += "</g>\n"
    }
  }

  /// Baseline of a far-side label row.
  func labelY(_ lane: Lane, row: Int) -> Int {
    lane.side < 0 ? lane.line - 90 - row * Self.rowHeight : lane.line + 170 + row * Self.rowHeight
  }
}
