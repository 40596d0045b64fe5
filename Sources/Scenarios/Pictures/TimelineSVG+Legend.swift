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
    items.append(KeyItem(sample: { [self] x, y in text(.k, "dup", x: x, y: y + 35) }, text: "duplicate copy"))
    items.append(KeyItem(sample: { x, y in "<circle cx=\"\(S.n(x + 110))\" cy=\"\(S.n(y))\" r=\"4.5\" fill=\"#1f2328\"/>" }, text: "intent"))
    items.append(
      KeyItem(
        sample: { x, y in "<rect x=\"\(S.n(x + 75))\" y=\"\(S.n(y - 35))\" width=\"7\" height=\"7\" fill=\"#59636e\"/>" }, text: "server decision"))
    for (fill, text) in [(nil, "offline"), ("#ffd8d3", "server down"), ("#fff1b8", "background"), ("#dafbe1", "settle")] {
      items.append(
        KeyItem(
          sample: { x, y in
            let hatch = fill == nil ? Self.hatch(x0: x, y0: y - 60, x1: x + 220, y1: y + 60) : ""
            return hatch
              + "<rect x=\"\(S.n(x))\" y=\"\(S.n(y - 60))\" width=\"22\" height=\"12\" fill=\"\(fill ?? "none")\" stroke=\"#d0d7de\" stroke-width=\"0.5\"/>"
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
      let w = 260 + SVGText.width(item.text, size: TextRole.lg.size, mono: false) + 180
      if x + w > width - 100 {
        row += 1
        x = 160
      }
      out.append((item, x, row))
      x += w
    }
    return out
  }

  /// The width anomaly text may take (estimated), from x = 42 px to 10 px before the edge.
  var anomalyWidth: Int { max(3_000, width - 520) }

  var anomalyLines: [[String]] {
    report.anomalies.map { a in
      let place = a.place
      let head = "\(a.kind.rawValue)\(a.kind.isViolation ? "" : " (informational)")\(place.isEmpty ? "" : " · " + place) — "
      return SVGText.wrap(head + a.explanation, width: anomalyWidth, size: TextRole.ax.size)
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
      out += text(.lg, item.text, x: x + 260, y: y + 40) + "\n"
    }
    var y = top + ((keyLayout.last?.2 ?? 0) + 1) * Self.keyRow + 250
    let heading = report.anomalies.isEmpty ? "No anomalies." : "Anomalies (\(report.verdict))"
    out += text(.ax, heading, x: 160, y: y, weight: 600) + "\n"
    y += 80
    for (k, lines) in anomalyLines.enumerated() {
      let a = report.anomalies[k]
      y += Self.anomalyLine
      out += "<g><title>\(S.escape(a.explanation))</title>"
      out += badge(k + 1, x: 260, y: y - 40, violation: a.kind.isViolation)
      for (j, line) in lines.enumerated() {
        out += text(.ax, line, x: 420, y: y + j * Self.anomalyLine)
      }
      out += "</g>\n"
      y += (lines.count - 1) * Self.anomalyLine + 60
    }
  }

  /// A numbered disc: red for a violation, blue for an informational anomaly.
  func badge(_ number: Int, x: Int, y: Int, violation: Bool) -> String {
    let color = violation ? TimelineStyle.red : TimelineStyle.blue
    return "<circle cx=\"\(S.n(x))\" cy=\"\(S.n(y))\" r=\"8\" fill=\"\(color)\"/>" + text(.badge, "\(number)", x: x, y: y + 38, anchor: "middle")
  }

  /// The room a badge takes: its disc, and its number's estimated box.
  static func badgeBox(_ number: Int, x: Int, y: Int) -> Box {
    let digits = box("\(number)", .badge, x: x, y: y + 38, anchor: "middle")
    return Box(x0: min(x - 80, digits.x0), y0: y - 80, x1: max(x + 80, digits.x1), y1: y + 80)
  }

  /// Each anomaly: its intents ringed in red, the loser linked to the write that beat it, the
  /// decisive server decision ringed, and a numbered badge, all with the explanation as tooltip.
  mutating func drawAnomalyLinks() {
    for (k, a) in report.anomalies.enumerated() {
      let color = a.kind.isViolation ? TimelineStyle.red : TimelineStyle.blue
      var g = "<g><title>\(S.escape("\(k + 1). \(a.kind.rawValue): \(a.explanation)"))</title>"
      // Where the badge may go, best first: along the link, else beside the mark.
      var spots: [(Int, Int)] = []
      let decided = decisionOf[k].flatMap { storeAt["\($0.store.seq):\($0.store.key)"] }
      if let (loser, winner) = a.pair(in: history) {
        let (xl, yl) = point(loser)
        let (xw, yw) = point(winner)
        let path: String
        let steps = [5, 4, 6, 3, 7, 2, 8]
        if laneOf[Int(loser.device)] == laneOf[Int(winner.device)] {
          let lane = lanes[laneOf[Int(loser.device)]]
          let near = lane.side == 0 ? 1 : -lane.side
          let (cx, cy) = ((xl + xw) / 2, lane.line + near * 320)
          path = "M\(S.n(xl)),\(S.n(yl))Q\(S.n(cx)),\(S.n(cy)) \(S.n(xw)),\(S.n(yw))"
          spots = steps.map { t in
            let u = 10 - t
            return ((u * u * xl + 2 * u * t * cx + t * t * xw) / 100, (u * u * yl + 2 * u * t * cy + t * t * yw) / 100)
          }
        } else {
          let ym = (yl + yw) / 2
          path = "M\(S.n(xl)),\(S.n(yl))C\(S.n(xl)),\(S.n(ym)) \(S.n(xw)),\(S.n(ym)) \(S.n(xw)),\(S.n(yw))"
          spots = steps.map { t in
            let u = 10 - t
            let (a, b) = (u * u * (u + 3 * t), t * t * (3 * u + t))
            return ((a * xl + b * xw) / 1_000, (u * u * u * yl + 3 * u * t * (u + t) * ym + t * t * t * yw) / 1_000)
          }
        }
        g += "<path d=\"\(path)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" stroke-dasharray=\"7 3\" stroke-opacity=\"0.9\"/>"
        if let (sx, sy) = decided {
          g +=
            "<line x1=\"\(S.n(xw))\" y1=\"\(S.n(yw))\" x2=\"\(S.n(sx))\" y2=\"\(S.n(sy))\" stroke=\"\(color)\" stroke-width=\"1\" stroke-dasharray=\"2 3\" stroke-opacity=\"0.8\"/>"
        }
        spots += (1...4).map { (spots[0].0 - $0 * 180, spots[0].1) }
      } else if let first = a.intents.first.flatMap({ history.intent($0) }) {
        let (x, y) = point(first)
        spots = (0...4).map { (x - 220 - $0 * 180, y) } + [(x + 220, y)]
        // A delete undone: link it to the save that brought the record back.
        if a.kind == .resurrection, first.kind == .delete, let (sx, sy) = decided {
          g +=
            "<path d=\"M\(S.n(x)),\(S.n(y))C\(S.n(x)),\(S.n((y + sy) / 2)) \(S.n(sx)),\(S.n((y + sy) / 2)) \(S.n(sx)),\(S.n(sy))\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" stroke-dasharray=\"7 3\" stroke-opacity=\"0.9\"/>"
        }
      }
      if let (sx, sy) = decided {
        g += "<rect x=\"\(S.n(sx - 80))\" y=\"\(S.n(sy - 80))\" width=\"16\" height=\"16\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.6\"/>"
      }
      if !spots.isEmpty {
        // Clear of every label and of the badges before it.
        let (bx, by) = freeSpot(spots) { Self.badgeBox(k + 1, x: $0, y: $1) }
        taken.append(Self.badgeBox(k + 1, x: bx, y: by))
        g += badge(k + 1, x: bx, y: by, violation: a.kind.isViolation)
      }
      out += g + "</g>\n"
    }
  }

  func point(_ i: Intent) -> (Int, Int) { (axis.x(i.trueTime), lanes[laneOf[Int(i.device)]].line) }
}
