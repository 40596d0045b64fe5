import Replica
@_spi(Kernel) import Simulator

/// Colours and styles: one place, so the legend matches what is drawn.
enum TimelineStyle {
  static let css = """
    text{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;fill:#1f2328}\
    .h{font-size:15px;font-weight:600}.sub{font-size:12px;fill:#59636e}\
    .lane{font-size:13px;font-weight:600}.tick{font-size:10px;fill:#59636e}\
    .m{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,'DejaVu Sans Mono',monospace;font-size:11px}\
    .w{font-size:10px;font-style:italic;fill:#59636e}.k{font-size:10px;fill:#1f2328}\
    .lg{font-size:11px}.ax{font-size:12px}.bad{fill:#cf222e}.info{fill:#0969da}\
    .m,.w,.k{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
    """

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
    }
  }
}

extension TimelineDrawing {
  typealias S = SVGText

  mutating func draw() -> String {
    out = ""
    let legend = legendHeight()
    let legendTop = lanesBottom + 250 + (gapLabels.map(\.row).max() ?? 0) * 120
    let height = legendTop + legend
    out +=
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(S.n(width))\" height=\"\(S.n(height))\" viewBox=\"0 0 \(S.n(width)) \(S.n(height))\">\n"
    out += "<title>\(S.escape("\(report.scenario) — policy \(report.policy), seed \(report.seed)"))</title>\n"
    out += "<style>\(TimelineStyle.css)</style>\n"
    drawDefs()
    out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
    drawHeader()
    drawLanes()
    drawWindows()
    drawAxis()
    drawBreaks()
    drawMessages()
    drawStores()
    drawMarks()
    drawIntents()
    drawAnomalyLinks()
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
    out += "<pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
    out +=
      "<rect width=\"6\" height=\"6\" fill=\"#eef1f4\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#d0d7de\" stroke-width=\"2\"/></pattern>\n"
    out += "</defs>\n"
  }

  mutating func drawHeader() {
    out += "<text class=\"h\" x=\"16\" y=\"24\">\(S.escape(report.scenario))</text>\n"
    var sub = "policy \(report.policy) · seed \(report.seed) · found \(report.verdict) · \(report.converged ? "converged" : "not converged")"
    if !history.hasEvents { sub += " · no trace kept (run with the full trace for messages)" }
    out += "<text class=\"sub\" x=\"16\" y=\"44\">\(S.escape(sub))</text>\n"
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
          "<rect x=\"\(S.n(x0))\" y=\"\(S.n(lanesTop))\" width=\"\(S.n(x1 - x0))\" height=\"\(S.n(lanesBottom - lanesTop))\" fill=\"#dafbe1\" opacity=\"0.55\"/>\n"
        out += "<text class=\"w\" x=\"\(S.n(x0 + 30))\" y=\"\(S.n(lanesTop + 110))\" style=\"fill:#1a7f37\">settle</text>\n"
        continue
      }
      let lane = lanes[laneOf[w.node]]
      let fill: String
      switch w.kind {
      case .offline: fill = "url(#hatch)"
      case .down: fill = "#ffd8d3"
      default: fill = "#fff1b8"
      }
      out +=
        "<rect x=\"\(S.n(x0))\" y=\"\(S.n(lane.top + 20))\" width=\"\(S.n(x1 - x0))\" height=\"\(S.n(lane.bottom - lane.top - 40))\" fill=\"\(fill)\"/>\n"
    }
    for lane in lanes {
      out +=
        "<line x1=\"\(S.n(Self.left - 100))\" y1=\"\(S.n(lane.line))\" x2=\"\(S.n(width - 100))\" y2=\"\(S.n(lane.line))\" stroke=\"#8c959f\" stroke-width=\"1\"/>\n"
      out += "<text class=\"lane\" x=\"12\" y=\"\(S.n(lane.line + 45))\">\(S.escape(lane.name))</text>\n"
    }
  }

  /// Tick labels: the start of every busy stretch first, then round steps where they fit.
  mutating func drawAxis() {
    var taken: [(Int, Int)] = []
    var kept: [Int64] = []
    let ticks = axis.ticks
    for pass in [true, false] {
      for (t, start) in ticks where start == pass {
        let x = axis.x(VirtualTime(nanoseconds: t))
        let half = SVGText.width(TimeText.moment(t), size: 10) / 2
        guard !taken.contains(where: { x - half < $0.1 + 100 && x + half + 100 > $0.0 }) else { continue }
        taken.append((x - half, x + half))
        kept.append(t)
      }
    }
    for t in kept.sorted() {
      let x = axis.x(VirtualTime(nanoseconds: t))
      let label = TimeText.moment(t)
      out +=
        "<line x1=\"\(S.n(x))\" y1=\"\(S.n(lanesTop - 60))\" x2=\"\(S.n(x))\" y2=\"\(S.n(lanesBottom))\" stroke=\"#d8dee4\" stroke-width=\"0.6\"/>\n"
      out += "<text class=\"tick\" x=\"\(S.n(x))\" y=\"\(S.n(lanesTop - 120))\" text-anchor=\"middle\">\(S.escape(label))</text>\n"
    }
  }

  /// The length of each idle gap, placed under the lanes.
  var gapLabels: [Placed] {
    let gaps = axis.breaks.map { b in (x: (b.x0 + b.x1) / 2, text: TimeText.gap(b.t1 - b.t0)) }
    return Self.pack(gaps.map { ($0.x - SVGText.width($0.text, size: 10) / 2, $0.text) }, size: 10)
  }

  /// Each idle gap: the lifelines interrupted by `//`, and its length under the lanes.
  mutating func drawBreaks() {
    for (b, p) in zip(axis.breaks, gapLabels) {
      let mid = (b.x0 + b.x1) / 2
      out += "<g><title>\(S.escape("\(p.text) with nothing happening, left out"))</title>"
      for y in [lanesTop - 30] + lanes.map(\.line) {
        out += "<rect x=\"\(S.n(mid - 60))\" y=\"\(S.n(y - 20))\" width=\"12\" height=\"4\" fill=\"#ffffff\"/>"
        for dx in [-45, 25] {
          out +=
            "<line x1=\"\(S.n(mid + dx))\" y1=\"\(S.n(y + 50))\" x2=\"\(S.n(mid + dx + 20))\" y2=\"\(S.n(y - 50))\" stroke=\"#59636e\" stroke-width=\"1.2\"/>"
        }
      }
      out += "<text class=\"tick\" x=\"\(S.n(p.x))\" y=\"\(S.n(lanesBottom + 120 + p.row * 120))\">\(S.escape(p.text))</text></g>\n"
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
        if end.delivered, let note = messageNote(m) {
          let above = ye < from.line ? -60 : 110
          out += "<text class=\"k\" x=\"\(S.n(xe + 40))\" y=\"\(S.n(ye + above))\" style=\"fill:\(color)\">\(S.escape(note))</text>"
        }
        if end.duplicate {
          let lx = xs + (xe - xs) * 6 / 10 + 40
          let ly = from.line + (ye - from.line) * 6 / 10
          out += "<text class=\"k\" x=\"\(S.n(lx))\" y=\"\(S.n(ly))\" style=\"fill:\(color)\">dup</text>"
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
      case .fact:
        out +=
          "<path d=\"M\(S.n(x)),\(S.n(lane.line - 50))L\(S.n(x + 50)),\(S.n(lane.line))L\(S.n(x)),\(S.n(lane.line + 50))L\(S.n(x - 50)),\(S.n(lane.line))z\" fill=\"\(TimelineStyle.drop)\"/>\n"
      }
    }
    for lane in lanes {
      for (p, item) in nearLabels[lane.node] ?? [] {
        let near = -lane.side == 0 ? 1 : -lane.side
        let y = near > 0 ? lane.line + 130 + p.row * Self.nearRowHeight : lane.line - 60 - p.row * Self.nearRowHeight
        out +=
          "<text class=\"\(item.cssClass)\" x=\"\(S.n(p.x))\" y=\"\(S.n(y))\"><title>\(S.escape(item.tooltip))</title>\(S.escape(p.text))</text>\n"
      }
    }
  }

  mutating func drawIntents() {
    for i in history.intents {
      let lane = lanes[laneOf[Int(i.device)]]
      let x = axis.x(i.trueTime)
      let bad = anomalyOf[i.id] != nil
      let violation = anomalyOf[i.id]?.contains { report.anomalies[$0 - 1].kind.isViolation } ?? false
      let hue = violation ? TimelineStyle.red : "#0969da"
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
        let cls = bad ? (violation ? "m bad" : "m info") : "m"
        out += "<text class=\"\(cls)\" x=\"\(S.n(p.x))\" y=\"\(S.n(y))\">\(S.escape(p.text))</text>"
      }
      out += "</g>\n"
    }
  }

  /// Baseline of a far-side label row.
  func labelY(_ lane: Lane, row: Int) -> Int {
    lane.side < 0 ? lane.line - 90 - row * Self.rowHeight : lane.line + 170 + row * Self.rowHeight
  }
}
