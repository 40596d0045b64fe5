import Replica
@_spi(Kernel) import Simulator

extension TimelineDrawing {
  /// A legend entry: a small sample drawing and its words.
  struct KeyItem {
    var sample: (Int, Int) -> String
    var text: String
  }

  static let keyRow = 200
  static let anomalyLine = 165

  var keyItems: [KeyItem] {
    var items: [KeyItem] = []
    for m in TimelineStyle.messages {
      let dash = m.dash.map { " stroke-dasharray=\"\($0)\"" } ?? ""
      items.append(
        KeyItem(
          sample: { x, y in
            "<line x1=\"\(S.n(x))\" y1=\"\(S.n(y))\" x2=\"\(S.n(x + 220))\" y2=\"\(S.n(y))\" stroke=\"\(m.color)\" stroke-width=\"1.3\"\(dash) marker-end=\"url(#h\(m.kind.rawValue))\"/>"
          }, text: m.kind.name))
    }
    items.append(
      KeyItem(
        sample: { x, y in
          "<line x1=\"\(S.n(x))\" y1=\"\(S.n(y))\" x2=\"\(S.n(x + 180))\" y2=\"\(S.n(y))\" stroke=\"#59636e\" stroke-width=\"1.3\"/><path d=\"M\(S.n(x + 140)),\(S.n(y - 40))L\(S.n(x + 220)),\(S.n(y + 40))M\(S.n(x + 140)),\(S.n(y + 40))L\(S.n(x + 220)),\(S.n(y - 40))\" stroke=\"\(TimelineStyle.drop)\" stroke-width=\"2\"/>"
        }, text: "dropped"))
    items.append(KeyItem(sample: { x, y in "<text class=\"k\" x=\"\(S.n(x))\" y=\"\(S.n(y + 35))\">dup</text>" }, text: "duplicate copy"))
    items.append(KeyItem(sample: { x, y in "<circle cx=\"\(S.n(x + 110))\" cy=\"\(S.n(y))\" r=\"4.5\" fill=\"#1f2328\"/>" }, text: "intent"))
    items.append(
      KeyItem(
        sample: { x, y in "<rect x=\"\(S.n(x + 75))\" y=\"\(S.n(y - 35))\" width=\"7\" height=\"7\" fill=\"#59636e\"/>" }, text: "server decision"))
    for (fill, text) in [("url(#hatch)", "offline"), ("#ffd8d3", "server down"), ("#fff1b8", "background"), ("#dafbe1", "settle")] {
      items.append(
        KeyItem(
          sample: { x, y in
            "<rect x=\"\(S.n(x))\" y=\"\(S.n(y - 60))\" width=\"22\" height=\"12\" fill=\"\(fill)\" stroke=\"#d0d7de\" stroke-width=\"0.5\"/>"
          }, text: text))
    }
    items.append(
      KeyItem(
        sample: { x, y in
          "<line x1=\"\(S.n(x + 110))\" y1=\"\(S.n(y - 70))\" x2=\"\(S.n(x + 110))\" y2=\"\(S.n(y + 70))\" stroke=\"#1f2328\" stroke-width=\"3\"/>"
        }, text: "killed"))
    items.append(
      KeyItem(
        sample: { x, y in
          "<path d=\"M\(S.n(x + 80)),\(S.n(y - 70))L\(S.n(x + 110)),\(S.n(y - 20))L\(S.n(x + 80)),\(S.n(y + 30))L\(S.n(x + 110)),\(S.n(y + 80))\" fill=\"none\" stroke=\"#8c959f\"/>"
        }, text: "idle time left out"))
    items.append(
      KeyItem(
        sample: { x, y in
          "<circle cx=\"\(S.n(x + 110))\" cy=\"\(S.n(y))\" r=\"8.5\" fill=\"none\" stroke=\"\(TimelineStyle.red)\" stroke-width=\"1.6\"/><circle cx=\"\(S.n(x + 110))\" cy=\"\(S.n(y))\" r=\"4.5\" fill=\"\(TimelineStyle.red)\"/>"
        }, text: "anomaly: the lost intent and what beat it"))
    return items
  }

  /// Key items laid out in rows: (item, x, row).
  var keyLayout: [(KeyItem, Int, Int)] {
    var x = 160
    var row = 0
    var out: [(KeyItem, Int, Int)] = []
    for item in keyItems {
      let w = 260 + SVGText.width(item.text, size: 11) + 180
      if x + w > width - 100 {
        row += 1
        x = 160
      }
      out.append((item, x, row))
      x += w
    }
    return out
  }

  /// Columns of anomaly text per line.
  var anomalyColumns: Int { max(40, (width - 700) / 70) }

  var anomalyLines: [[String]] {
    report.anomalies.map { a in
      let place = a.place
      let head = "\(a.kind.rawValue)\(a.kind.isViolation ? "" : " (informational)")\(place.isEmpty ? "" : " · " + place) — "
      return SVGText.wrap(head + a.explanation, columns: anomalyColumns)
    }
  }

  func legendHeight() -> Int {
    let rows = (keyLayout.last?.2 ?? 0) + 1
    let lines = anomalyLines.reduce(0) { $0 + $1.count }
    return rows * Self.keyRow + 350 + lines * Self.anomalyLine + report.anomalies.count * 60 + 100
  }

  mutating func drawLegend(top: Int) {
    for (item, x, row) in keyLayout {
      let y = top + row * Self.keyRow + 60
      out += item.sample(x, y)
      out += "<text class=\"lg\" x=\"\(S.n(x + 260))\" y=\"\(S.n(y + 40))\">\(S.escape(item.text))</text>\n"
    }
    var y = top + ((keyLayout.last?.2 ?? 0) + 1) * Self.keyRow + 250
    let heading = report.anomalies.isEmpty ? "No anomalies." : "Anomalies (\(report.verdict))"
    out += "<text class=\"ax\" x=\"16\" y=\"\(S.n(y))\" style=\"font-weight:600\">\(S.escape(heading))</text>\n"
    y += 80
    for (k, lines) in anomalyLines.enumerated() {
      let a = report.anomalies[k]
      y += Self.anomalyLine
      out += "<g><title>\(S.escape(a.explanation))</title>"
      out += badge(k + 1, x: 260, y: y - 40, violation: a.kind.isViolation)
      for (j, line) in lines.enumerated() {
        out += "<text class=\"ax\" x=\"42\" y=\"\(S.n(y + j * Self.anomalyLine))\">\(S.escape(line))</text>"
      }
      out += "</g>\n"
      y += (lines.count - 1) * Self.anomalyLine + 60
    }
  }

  /// A numbered disc: red for a violation, blue for an informational anomaly.
  func badge(_ number: Int, x: Int, y: Int, violation: Bool) -> String {
    let color = violation ? TimelineStyle.red : "#0969da"
    return "<circle cx=\"\(S.n(x))\" cy=\"\(S.n(y))\" r=\"8\" fill=\"\(color)\"/>"
      + "<text x=\"\(S.n(x))\" y=\"\(S.n(y + 38))\" text-anchor=\"middle\" style=\"font-size:11px;font-weight:700;fill:#ffffff\">\(number)</text>"
  }

  /// Each anomaly: its intents ringed in red, the loser linked to the write that beat it, the
  /// decisive server decision ringed, and a numbered badge, all with the explanation as tooltip.
  mutating func drawAnomalyLinks() {
    var badges: [String: Int] = [:]
    for (k, a) in report.anomalies.enumerated() {
      let color = a.kind.isViolation ? TimelineStyle.red : "#0969da"
      var g = "<g><title>\(S.escape("\(k + 1). \(a.kind.rawValue): \(a.explanation)"))</title>"
      var badgeAt: (Int, Int)?
      if let (loser, winner) = a.pair(in: history) {
        let (xl, yl) = point(loser)
        let (xw, yw) = point(winner)
        let path: String
        if laneOf[Int(loser.device)] == laneOf[Int(winner.device)] {
          let lane = lanes[laneOf[Int(loser.device)]]
          let near = lane.side == 0 ? 1 : -lane.side
          let cy = lane.line + near * 320
          path = "M\(S.n(xl)),\(S.n(yl))Q\(S.n((xl + xw) / 2)),\(S.n(cy)) \(S.n(xw)),\(S.n(yw))"
          badgeAt = ((xl + xw) / 2, lane.line + near * 160)
        } else {
          let ym = (yl + yw) / 2
          path = "M\(S.n(xl)),\(S.n(yl))C\(S.n(xl)),\(S.n(ym)) \(S.n(xw)),\(S.n(ym)) \(S.n(xw)),\(S.n(yw))"
          badgeAt = ((xl + xw) / 2, ym)
        }
        g += "<path d=\"\(path)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" stroke-dasharray=\"7 3\" opacity=\"0.9\"/>"
        if let f = a.field?.name, let key = a.record?.key, let fi = a.field?.index,
          let s = history.decisiveStore(key: key, field: fi, loser: loser.id), let (sx, sy) = storeAt["\(s.seq):\(s.key)"]
        {
          g += "<rect x=\"\(S.n(sx - 80))\" y=\"\(S.n(sy - 80))\" width=\"16\" height=\"16\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.6\"/>"
          g +=
            "<line x1=\"\(S.n(xw))\" y1=\"\(S.n(yw))\" x2=\"\(S.n(sx))\" y2=\"\(S.n(sy))\" stroke=\"\(color)\" stroke-width=\"1\" stroke-dasharray=\"2 3\" opacity=\"0.8\"/>"
          let kept = s.stored.flatMap { fi < $0.fields.count ? Vocabulary.writer($0.fields[fi].writer) : nil } ?? "?"
          g += decisionNote("\(f)←\(kept), not i\(loser.id)", x: sx, y: sy, color: color)
        }
      } else if let first = a.intents.first.flatMap({ history.intent($0) }) {
        let (x, y) = point(first)
        badgeAt = (x - 220, y)
        // A delete undone: link it to the save that brought the record back.
        if a.kind == .resurrection, first.kind == .delete, let s = history.revivingStore(key: first.record),
          let (sx, sy) = storeAt["\(s.seq):\(s.key)"]
        {
          g +=
            "<path d=\"M\(S.n(x)),\(S.n(y))C\(S.n(x)),\(S.n((y + sy) / 2)) \(S.n(sx)),\(S.n((y + sy) / 2)) \(S.n(sx)),\(S.n(sy))\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" stroke-dasharray=\"7 3\" opacity=\"0.9\"/>"
          g += "<rect x=\"\(S.n(sx - 80))\" y=\"\(S.n(sy - 80))\" width=\"16\" height=\"16\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.6\"/>"
          g += decisionNote("\(history.names.record(first.record)) saved again", x: sx, y: sy, color: color)
        }
      }
      if let (bx, by) = badgeAt {
        // Several anomalies on one mark: their badges side by side.
        let n = badges["\(bx),\(by)", default: 0]
        badges["\(bx),\(by)"] = n + 1
        g += badge(k + 1, x: bx - n * 180, y: by, violation: a.kind.isViolation)
      }
      out += g + "</g>\n"
    }
  }

  /// A few words under a decisive server decision.
  func decisionNote(_ text: String, x: Int, y: Int, color: String) -> String {
    "<text class=\"k\" x=\"\(S.n(x + 100))\" y=\"\(S.n(y + 130))\" style=\"fill:\(color)\">\(S.escape(text))</text>"
  }

  func point(_ i: Intent) -> (Int, Int) { (axis.x(i.trueTime), lanes[laneOf[Int(i.device)]].line) }
}
