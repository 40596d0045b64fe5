import Scenarios
@_spi(Kernel) import Simulator

/// The four plots of a campaign in the HTML report. Each returns the SVG, or — when the records
/// have nothing for it — a sentence saying so, which the page shows in the plot's place.
enum ReportPlots {
  /// A plot, or why there is none.
  enum Figure {
    case svg(String)
    case absent(String)
  }

  static let width = 640
  /// Reds for violations, blues for informational kinds: ColorBrewer's 9-class sequential
  /// schemes, lightest first.
  static let reds = ["#fff5f0", "#fee0d2", "#fcbba1", "#fc9272", "#fb6a4a", "#ef3b2c", "#cb181d", "#a50f15", "#67000d"]
  static let blues = ["#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"]

  /// `lost-edit + stale-overwrite` cut to `limit` characters with `…`.
  static func cut(_ s: String, _ limit: Int) -> String { s.count <= limit ? s : String(s.prefix(limit - 1)) + "…" }

  /// (a) Failing seeds per signature: a bar each, most seeds first (the first 24; the others
  /// together in one bar).
  static func signatures(_ c: ReportCampaign) -> Figure {
    let groups = c.findings.groups.enumerated().sorted { a, b in
      a.element.seeds != b.element.seeds ? a.element.seeds > b.element.seeds : a.offset < b.offset
    }
    guard !groups.isEmpty else { return .absent("No seed failed: there is no signature to plot.") }
    var rows: [(label: String, full: String, seeds: Int)] = groups.prefix(24).map { number, g in
      let kinds = g.signature.key.joined(separator: " + ")
      return ("#\(number + 1) \(kinds)", "signature \(number + 1): \(kinds)", g.seeds)
    }
    if groups.count > 24 {
      let rest = groups.dropFirst(24)
      rows.append(("\(rest.count) others", "\(rest.count) other signatures", rest.reduce(0) { $0 + $1.element.seeds }))
    }
    let maximum = SVGPlot.niceMaximum(rows.map(\.seeds).max() ?? 1)
    let (left, right, top, rowHeight) = (250, width - 50, 12, 22)
    var plot = SVGPlot(name: "signatures", width: width, height: top + rows.count * rowHeight + 34)
    for (i, row) in rows.enumerated() {
      let y = top + i * rowHeight
      plot.text(cut(row.label, 38), x: left - 8, y: y + 15, anchor: "end", tooltip: row.full)
      let length = (right - left) * row.seeds / maximum
      plot.bar(
        x: left, y: y + 3, width: length, height: rowHeight - 6, fill: "#cf222e",
        tooltip: "\(row.full): \(ReportText.plural(row.seeds, "seed")) (\(ReportText.percent(row.seeds, of: c.seeds)))")
      plot.text(ReportText.group(row.seeds), x: left + length + 4, y: y + 15, size: 10, fill: "#59636e")
    }
    plot.horizontalAxis(x0: left, x1: right, y: top + rows.count * rowHeight + 4, maximum: maximum) { ReportText.group($0) }
    return .svg(plot.rendered(title: "Failing seeds per signature"))
  }

  /// (b) Kinds over seed ranges: a heat map, one row per kind that occurred (violations red,
  /// informational kinds blue), one column per seed range; a cell's shade is the share of the
  /// range's seeds with the kind.
  static func kinds(_ c: ReportCampaign) -> Figure {
    let rows = c.kinds.filter { $0.seeds > 0 }.sorted { a, b in
      a.kind.isViolation != b.kind.isViolation ? a.kind.isViolation : a.kind.ordinal < b.kind.ordinal
    }
    guard !rows.isEmpty else { return .absent("No seed had an anomaly of any kind.") }
    let buckets = c.buckets
    let (left, top, rowHeight) = (170, 10, 20)
    let cellWidth = max(4, (width - left - 20) / max(buckets.count, 1))
    let legendY = top + rows.count * rowHeight + 44
    var plot = SVGPlot(name: "kinds", width: width, height: legendY + 30)
    for (r, row) in rows.enumerated() {
      let y = top + r * rowHeight
      plot.text(row.kind.rawValue + (row.kind.isViolation ? "" : " (info)"), x: left - 8, y: y + 14, anchor: "end")
      let palette = row.kind.isViolation ? reds : blues
      for (b, bucket) in buckets.enumerated() {
        let x = left + b * cellWidth
        let n = bucket.seedsByKind[row.kind.ordinal]
        let range = bucket.lower == bucket.upper ? "seed \(bucket.lower)" : "seeds \(bucket.lower)..\(bucket.upper)"
        let tip = "\(row.kind.rawValue), \(range): \(n) of \(ReportText.plural(bucket.seeds, "seed"))"
        if n == 0 || bucket.seeds == 0 {
          plot.rect(x: x, y: y + 1, width: cellWidth - 1, height: rowHeight - 2, fill: "#f6f8fa", tooltip: tip)
        } else {
          // Shades 1…8 by the share, rounded up: any seed at all shows.
          let shade = min(8, max(1, (n * 8 + bucket.seeds - 1) / bucket.seeds))
          plot.bar(x: x, y: y + 1, width: cellWidth - 1, height: rowHeight - 2, fill: palette[shade], tooltip: tip)
        }
      }
    }
    let axisY = top + rows.count * rowHeight + 4
    let end = left + buckets.count * cellWidth
    plot.text("\(buckets[0].lower)", x: left, y: axisY + 12, size: 10, fill: "#59636e")
    if buckets.count >= 5 {
      let middle = buckets.count / 2
      plot.text("\(buckets[middle].lower)", x: left + middle * cellWidth, y: axisY + 12, anchor: "middle", size: 10, fill: "#59636e")
    }
    plot.text("\(buckets.last!.upper)", x: end, y: axisY + 12, anchor: "end", size: 10, fill: "#59636e")
    plot.text(
      "seeds, in \(ReportText.plural(buckets.count, "range")) of equal width", x: (left + end) / 2, y: axisY + 28, anchor: "middle", size: 10,
      fill: "#59636e")
    // The scale: a swatch per shade, violations then informational kinds.
    plot.text("share of a range's seeds with the kind:", x: 8, y: legendY + 14, size: 10, fill: "#59636e")
    var x = 210
    for (palette, what) in [(reds, "violations"), (blues, "informational")] {
      plot.text("0%", x: x, y: legendY + 14, size: 10, fill: "#59636e")
      for shade in 1...8 { plot.rect(x: x + 18 + (shade - 1) * 12, y: legendY + 4, width: 11, height: 12, fill: palette[shade]) }
      plot.text("100% \(what)", x: x + 18 + 8 * 12 + 4, y: legendY + 14, size: 10, fill: "#59636e")
      x += 215
    }
    return .svg(plot.rendered(title: "Seeds with each kind, over seed ranges"))
  }

  /// (c) Time to converge: seeds by how long sync took to go quiet in settle, on bins of 1, 2
  /// and 5 times a power of ten; seeds never quiet in a red bar of their own.
  static func settle(_ c: ReportCampaign) -> Figure {
    let bins = c.settleBins
    guard let first = bins.firstIndex(where: { $0 > 0 }), let last = bins.lastIndex(where: { $0 > 0 }) else {
      if c.neverQuiet > 0 { return .absent("No seed went quiet in settle: \(ReportText.plural(c.neverQuiet, "seed")) never did.") }
      return .absent("The records hold no time to converge (written by a version of sim-cli before it was recorded).")
    }
    let shown = Array(first...last)
    let columns = shown.count + (c.neverQuiet > 0 ? 1 : 0)
    let (left, top, bottom) = (56, 14, 170)
    let barWidth = max(6, (width - left - 20) / columns)
    let maximum = SVGPlot.niceMaximum(max(bins.max() ?? 1, c.neverQuiet))
    var plot = SVGPlot(name: "settle", width: width, height: bottom + 42)
    plot.verticalAxis(x: left, y0: bottom, y1: top, gridTo: left + columns * barWidth, maximum: maximum) { ReportText.group($0) }
    func edge(_ bin: Int) -> String { bin == 0 ? "0" : SettleBins.label(SettleBins.edges[bin - 1]) }
    for (i, bin) in shown.enumerated() {
      let x = left + i * barWidth
      let n = bins[bin]
      let upper = bin < SettleBins.edges.count ? SettleBins.label(SettleBins.edges[bin]) : "∞"
      if n > 0 {
        let h = (bottom - top) * n / maximum
        plot.bar(
          x: x + 1, y: bottom - h, width: barWidth - 2, height: h, fill: "#0969da",
          tooltip: "\(edge(bin)) to \(upper): \(ReportText.plural(n, "seed"))")
      }
      // Decades only, so that labels do not crowd.
      let label = edge(bin)
      if label == "0" || label.hasPrefix("1") && !label.hasPrefix("2") && !label.hasPrefix("5") {
        plot.line(x1: x, y1: bottom, x2: x, y2: bottom + 4)
        plot.text(label, x: x, y: bottom + 16, anchor: "middle", size: 10, fill: "#59636e")
      }
    }
    if c.neverQuiet > 0 {
      let x = left + shown.count * barWidth
      let h = (bottom - top) * c.neverQuiet / maximum
      plot.bar(
        x: x + 1, y: bottom - h, width: barWidth - 2, height: h, fill: "#cf222e", tooltip: "never quiet: \(ReportText.plural(c.neverQuiet, "seed"))")
      plot.text("never", x: x + barWidth / 2, y: bottom + 16, anchor: "middle", size: 10, fill: "#cf222e")
    }
    plot.line(x1: left, y1: bottom, x2: left + columns * barWidth, y2: bottom)
    plot.text(
      "time from the start of settle until sync went quiet (simulated)", x: left + columns * barWidth / 2, y: bottom + 34, anchor: "middle", size: 10,
      fill: "#59636e")
    return .svg(plot.rendered(title: "Time to converge in settle"))
  }

  /// (d) Seeds per second on one worker, per seed range: from the wall time `fuzz --timings`
  /// records per seed.
  static func throughput(_ c: ReportCampaign) -> Figure {
    guard c.timedSeeds > 0 else {
      return .absent("No wall-clock times in these records: 'fuzz --timings --out FILE' adds each seed's time on its worker.")
    }
    let buckets = c.buckets
    // Tenths of a seed per second, in integers.
    let rates = buckets.map { b -> Int? in
      b.timedSeeds > 0 && b.wallMicroseconds > 0 ? Int(UInt64(b.timedSeeds) * 10_000_000 / b.wallMicroseconds) : nil
    }
    let maximum = SVGPlot.niceMaximum(rates.compactMap { $0 }.max() ?? 1)
    let (left, top, bottom) = (56, 14, 170)
    let barWidth = max(4, (width - left - 20) / max(buckets.count, 1))
    var plot = SVGPlot(name: "throughput", width: width, height: bottom + 42)
    plot.verticalAxis(x: left, y0: bottom, y1: top, gridTo: left + buckets.count * barWidth, maximum: maximum) { tenths in
      tenths % 10 == 0 ? ReportText.group(tenths / 10) : "\(tenths / 10).\(tenths % 10)"
    }
    for (i, rate) in rates.enumerated() {
      guard let rate else { continue }
      let b = buckets[i]
      let h = max(1, (bottom - top) * rate / maximum)
      plot.bar(
        x: left + i * barWidth + 1, y: bottom - h, width: barWidth - 2, height: h, fill: "#1a7f37",
        tooltip: "seeds \(b.lower)..\(b.upper): \(rate / 10).\(rate % 10) seeds/s over \(ReportText.plural(b.timedSeeds, "timed seed"))")
    }
    plot.line(x1: left, y1: bottom, x2: left + buckets.count * barWidth, y2: bottom)
    plot.text("\(buckets[0].lower)", x: left, y: bottom + 16, size: 10, fill: "#59636e")
    plot.text("…\(buckets.last!.upper)", x: left + buckets.count * barWidth, y: bottom + 16, anchor: "end", size: 10, fill: "#59636e")
    plot.text(
      "seed ranges · seeds per second on one worker", x: left + buckets.count * barWidth / 2, y: bottom + 34, anchor: "middle", size: 10,
      fill: "#59636e")
    return .svg(plot.rendered(title: "Seeds per second (one worker)"))
  }
}
