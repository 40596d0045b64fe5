import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli report --html`: the report as one self-contained page — inline CSS, inline SVG, no
/// script, nothing fetched (a Content-Security-Policy forbids it) — the same bytes for the same
/// records and minimal scenarios. Per campaign: its facts, four plots (``ReportPlots``), the
/// table by kind, the table of signatures, and each signature's minimal scenario with its
/// timeline.
enum ReportHTML {
  static func render(_ campaigns: [ReportCampaign], inputs: [(name: String, records: Int)], pictures: [[MinimalPicture]]) -> String {
    let seeds = campaigns.reduce(0) { $0 + $1.seeds }
    let failing = campaigns.reduce(0) { $0 + $1.failing }
    let title = campaigns.count == 1 ? "\(campaigns[0].key.subject) · workload \(campaigns[0].key.scenario)" : "\(campaigns.count) campaigns"
    var out = """
      <!DOCTYPE html>
      <html lang="en">
      <head>
      <meta charset="utf-8">
      <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
      <meta name="viewport" content="width=device-width, initial-scale=1">
      <meta name="generator" content="sim-cli \(Version.string)">
      <title>Fuzz report: \(HTML.escape(title))</title>
      <style>
      \(style)
      </style>
      </head>
      <body>
      <header>
      <h1>Fuzz report</h1>
      <p class="sub">\(ReportText.plural(campaigns.count, "campaign")) · \(ReportText.plural(seeds, "seed")) · \(ReportText.group(failing)) failing (\(ReportText.percent(failing, of: seeds))) · sim-cli \(Version.string)</p>

      """
    let listed = inputs.prefix(20).map { "\(HTML.escape($0.name)) (\(ReportText.plural($0.records, "record")))" }
    let more = inputs.count > 20 ? ", and \(ReportText.plural(inputs.count - 20, "more file"))" : ""
    out += "<p class=\"inputs\">From \(listed.joined(separator: ", "))\(more).</p>\n"
    if campaigns.count > 1 {
      out += "<nav><ul>\n"
      for (i, c) in campaigns.enumerated() {
        out += "<li><a href=\"#c\(i + 1)\">\(HTML.escape(c.key.subject)) · workload \(HTML.escape(c.key.scenario))</a></li>\n"
      }
      out += "</ul></nav>\n"
    }
    out += "</header>\n<main>\n"
    for (i, c) in campaigns.enumerated() {
      out += campaign(c, id: "c\(i + 1)", pictures: pictures[i])
    }
    out += "</main>\n</body>\n</html>\n"
    return out
  }

  static func campaign(_ c: ReportCampaign, id: String, pictures: [MinimalPicture]) -> String {
    var out = "<section class=\"campaign\" id=\"\(id)\">\n<h2>\(HTML.escape(c.key.subject)) · workload \(HTML.escape(c.key.scenario))</h2>\n"
    out += "<table class=\"facts\">\n"
    out += row("seeds", ReportText.seedsText(c.coverage))
    out += row(
      "failing",
      "\(ReportText.plural(c.failing, "seed")) (\(ReportText.percent(c.failing, of: c.seeds))) · \(ReportText.plural(c.findings.groups.count, "signature"))"
    )
    if let settle = c.findings.convergenceText { out += row("settle", "sync quiet after \(settle)") }
    if c.timedSeeds > 0 && c.wallMicroseconds > 0 {
      let rate = UInt64(c.timedSeeds) * 10_000_000 / c.wallMicroseconds
      let seconds = (c.wallMicroseconds + 50_000) / 100_000
      out += row(
        "wall time",
        "\(ReportText.plural(c.timedSeeds, "seed")) timed (fuzz --timings): \(ReportText.group(Int(rate / 10))).\(rate % 10) seeds/s on one worker, \(ReportText.group(Int(seconds / 10))).\(seconds % 10) s of worker time in all"
      )
    }
    out += "</table>\n<div class=\"plots\">\n"
    let figures: [(String, ReportPlots.Figure)] = [
      ("Failing seeds per signature", ReportPlots.signatures(c)),
      ("Kinds over seed ranges", ReportPlots.kinds(c)),
      ("Time to converge in settle", ReportPlots.settle(c)),
      ("Seeds per second on one worker", ReportPlots.throughput(c)),
    ]
    for (caption, figure) in figures {
      out += "<figure>\n<figcaption>\(HTML.escape(caption))</figcaption>\n"
      switch figure {
      case .svg(let svg): out += svg + "\n"
      case .absent(let why): out += "<p class=\"absent\">\(HTML.escape(why))</p>\n"
      }
      out += "</figure>\n"
    }
    out += "</div>\n"
    out += kinds(c)
    out += signatures(c, id: id, pictures: pictures)
    out += "</section>\n"
    return out
  }

  static func row(_ label: String, _ value: String) -> String {
    "<tr><th>\(HTML.escape(label))</th><td>\(HTML.escape(value))</td></tr>\n"
  }

  /// Seeds and anomalies by kind.
  static func kinds(_ c: ReportCampaign) -> String {
    let rows = c.kinds.filter { $0.seeds > 0 }.sorted { a, b in
      a.kind.isViolation != b.kind.isViolation ? a.kind.isViolation : a.kind.ordinal < b.kind.ordinal
    }
    guard !rows.isEmpty else { return "<h3>Anomalies by kind</h3>\n<p>No anomaly of any kind.</p>\n" }
    var out =
      "<h3>Anomalies by kind</h3>\n<table class=\"grid\">\n<thead><tr><th>kind</th><th class=\"n\">seeds</th><th class=\"n\">anomalies</th><th></th></tr></thead>\n<tbody>\n"
    for row in rows {
      out +=
        "<tr><td><code>\(row.kind.rawValue)</code></td><td class=\"n\">\(ReportText.group(row.seeds))</td><td class=\"n\">\(ReportText.group(row.anomalies))</td><td class=\"note\">\(row.kind.isViolation ? "" : "informational")</td></tr>\n"
    }
    return out + "</tbody>\n</table>\n"
  }

  /// The table of signatures, then a block per signature.
  static func signatures(_ c: ReportCampaign, id: String, pictures: [MinimalPicture]) -> String {
    guard !c.findings.groups.isEmpty else { return "<h3>Signatures</h3>\n<p>No seed failed.</p>\n" }
    var out =
      "<h3>Signatures</h3>\n<table class=\"grid\">\n<thead><tr><th>#</th><th class=\"n\">seeds</th><th class=\"n\">share</th><th class=\"n\">first</th><th>kinds</th><th>usual axes</th></tr></thead>\n<tbody>\n"
    for (i, g) in c.findings.groups.enumerated() {
      out +=
        "<tr><td><a href=\"#\(id)s\(i + 1)\">\(i + 1)</a></td><td class=\"n\">\(ReportText.group(g.seeds))</td><td class=\"n\">\(ReportText.percent(g.seeds, of: c.seeds))</td><td class=\"n\">\(g.firstSeed)</td><td>\(HTML.escape(g.signature.key.joined(separator: " + ")))</td><td>\(HTML.escape(ReportText.axesText(c, g.signature)))</td></tr>\n"
    }
    out += "</tbody>\n</table>\n"
    for (i, g) in c.findings.groups.enumerated() {
      let seeds = c.groupSeeds[i]
      var listed = seeds.first.map(String.init).joined(separator: ", ")
      if g.seeds > seeds.first.count { listed += " and \(ReportText.group(g.seeds - seeds.first.count)) more" }
      out += "<article class=\"signature\" id=\"\(id)s\(i + 1)\">\n"
      out += "<h4>Signature \(i + 1) · \(HTML.escape(g.signature.key.joined(separator: " + ")))</h4>\n"
      out += "<p class=\"meta\">\(ReportText.plural(g.seeds, "seed")) (\(ReportText.percent(g.seeds, of: c.seeds))) · seeds \(listed)</p>\n"
      out += "<p>Usual axes: \(HTML.escape(ReportText.axesText(c, g.signature)))</p>\n"
      out += "<p>Again: <code>\(HTML.escape(c.againCommand(seed: g.firstSeed)))</code></p>\n"
      let picture = pictures[i]
      out += "<p class=\"source\">Minimal scenario: \(HTML.escape(picture.source))</p>\n"
      if let text = picture.text { out += "<pre class=\"scenario\">\(HTML.escape(text))</pre>\n" }
      if let finding = picture.finding { out += "<pre class=\"finding\">\(HTML.escape(finding))</pre>\n" }
      if let svg = picture.svg { out += "<div class=\"timeline\">\n\(svg)</div>\n" }
      out += "</article>\n"
    }
    return out
  }

  static let style = """
    :root { color-scheme: light; }
    body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #1f2328; background: #f6f8fa; }
    header, main { max-width: 1340px; margin: 0 auto; padding: 0 24px; }
    header { padding-top: 20px; }
    h1 { font-size: 24px; margin: 0 0 4px; }
    h2 { font-size: 20px; margin: 0 0 12px; }
    h3 { font-size: 16px; margin: 24px 0 8px; }
    h4 { font-size: 15px; margin: 0 0 4px; }
    .sub { margin: 0; color: #1f2328; font-weight: 600; }
    .inputs { margin: 4px 0 16px; color: #59636e; word-break: break-all; }
    nav ul { margin: 0 0 16px; padding-left: 20px; }
    a { color: #0969da; text-decoration: none; }
    a:hover { text-decoration: underline; }
    section.campaign { background: #ffffff; border: 1px solid #d0d7de; border-radius: 8px; padding: 20px 24px; margin-bottom: 24px; }
    table.facts th { text-align: left; font-weight: 600; padding: 2px 16px 2px 0; vertical-align: top; color: #59636e; }
    table.facts td { padding: 2px 0; }
    .plots { display: grid; grid-template-columns: repeat(auto-fit, minmax(560px, 1fr)); gap: 16px; margin-top: 16px; }
    figure { margin: 0; padding: 12px; border: 1px solid #d0d7de; border-radius: 6px; background: #ffffff; overflow-x: auto; }
    figcaption { font-weight: 600; margin-bottom: 8px; }
    svg.plot { display: block; max-width: 100%; height: auto; }
    p.absent { margin: 24px 8px; color: #59636e; font-style: italic; }
    table.grid { border-collapse: collapse; margin: 4px 0 8px; }
    table.grid th, table.grid td { border-bottom: 1px solid #d8dee4; padding: 3px 12px 3px 0; text-align: left; vertical-align: top; }
    table.grid th { font-weight: 600; color: #59636e; }
    table.grid .n { text-align: right; font-variant-numeric: tabular-nums; }
    table.grid .note { color: #59636e; }
    article.signature { border-top: 1px solid #d0d7de; padding: 16px 0 8px; margin-top: 16px; }
    article.signature p { margin: 2px 0; }
    .meta { color: #59636e; }
    code, pre { font: 12px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; }
    code { background: #eff2f5; padding: 1px 4px; border-radius: 4px; word-break: break-all; }
    pre { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 8px 12px; overflow: auto; max-height: 28em; margin: 8px 0; }
    pre.finding { background: #fff8f8; border-color: #ffcecb; white-space: pre-wrap; }
    .source { color: #59636e; margin-top: 8px !important; word-break: break-all; }
    .timeline { overflow-x: auto; border: 1px solid #d0d7de; border-radius: 6px; background: #ffffff; margin: 8px 0; }
    .timeline svg { display: block; }
    """
}
