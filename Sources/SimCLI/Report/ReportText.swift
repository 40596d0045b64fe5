import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli report` as text: a header, then per campaign its seeds, failing share, time to
/// converge, a table by kind and a block per signature in the order of their first seeds (the
/// numbers `fuzz` gave them). At most ``columns`` wide — only a path longer than that, printed
/// whole on a line of its own, is wider. A pure function of the records (and of which minimal
/// scenario files exist): no wall-clock figure, so a sharded campaign prints what the unsharded
/// one prints.
enum ReportText {
  static let columns = 100
  /// Where a block's values start: `    minimal  `.
  static let labelWidth = 13
  /// Seeds listed per signature.
  static let firstSeeds = 5

  /// The whole report. `inputs` are the files with their record counts, in command-line order.
  static func render(_ campaigns: [ReportCampaign], inputs: [(name: String, records: Int)], minimal: [[MinimalScenarioLookup.Found]]) -> String {
    let seeds = campaigns.reduce(0) { $0 + $1.seeds }
    let failing = campaigns.reduce(0) { $0 + $1.failing }
    var out = "report: \(plural(campaigns.count, "campaign")) · \(plural(seeds, "seed")) · \(group(failing)) failing"
    out += seeds > 0 ? " (\(percent(failing, of: seeds)))\n" : "\n"
    let shown = inputs.prefix(20)
    for input in shown { out += "input \(input.name): \(plural(input.records, "record"))\n" }
    if inputs.count > shown.count {
      let rest = inputs.dropFirst(shown.count)
      out += "and \(plural(rest.count, "more input")): \(plural(rest.reduce(0) { $0 + $1.records }, "record"))\n"
    }
    for (index, campaign) in campaigns.enumerated() {
      out += "\n" + render(campaign, minimal: minimal[index])
    }
    return out
  }

  /// One campaign's block.
  static func render(_ campaign: ReportCampaign, minimal: [MinimalScenarioLookup.Found]) -> String {
    var out = wrap("\(campaign.key.subject) · workload \(campaign.key.scenario)", columns: columns).enumerated().map {
      ($0.offset == 0 ? "" : "    ") + $0.element + "\n"
    }.joined()
    out += field("seeds", seedsText(campaign.coverage), indent: 2)
    let signatures = campaign.findings.groups.count
    out += field(
      "failing",
      "\(plural(campaign.failing, "seed")) (\(percent(campaign.failing, of: campaign.seeds))) · \(plural(signatures, "signature"))", indent: 2)
    if let settle = campaign.findings.convergenceText {
      let unknown = campaign.settleUnknown > 0 ? "; \(plural(campaign.settleUnknown, "seed")) with no time recorded" : ""
      out += field("settle", "sync quiet after " + settle + unknown, indent: 2)
    }
    out += kindTable(campaign)
    for (index, group) in campaign.findings.groups.enumerated() {
      out += "\n" + signatureBlock(campaign, index: index, group: group, minimal: minimal[index])
    }
    return out
  }

  /// `1..1600: all 1,600 run`, with the step and the missing seeds when there are.
  static func seedsText(_ c: SeedCoverage) -> String {
    guard c.count > 1 else { return "\(c.first) only" }
    var out = "\(c.first)..\(c.last)"
    if c.step > 1 {
      let residue = c.first % c.step
      out += ", every \(ordinal(c.step)) (seed mod \(c.step) = \(residue)"
      out += c.step <= 1_000_000 ? ", as --shard \(residue + 1)/\(c.step) runs)" : ")"
    }
    if c.missing == 0 { return out + ": all \(group(c.count)) run" }
    out += ": \(group(c.count)) run, \(group(Int(clamping: c.missing))) missing ("
    var ranges = c.missingRanges.map { $0.lower == $0.upper ? "\($0.lower)" : "\($0.lower)..\($0.upper)" }
    if c.missingRangeCount > ranges.count { ranges.append("and \(plural(c.missingRangeCount - ranges.count, "more range"))") }
    return out + ranges.joined(separator: ", ") + ")"
  }

  /// Seeds and anomalies by kind, violations first; informational kinds marked.
  static func kindTable(_ campaign: ReportCampaign) -> String {
    var rows: [[String]] = []
    for informational in [false, true] {
      for row in campaign.kinds where row.kind.isViolation != informational && row.seeds > 0 {
        rows.append([row.kind.rawValue, group(row.seeds), group(row.anomalies), informational ? "informational" : ""])
      }
    }
    guard !rows.isEmpty else { return "  no anomaly of any kind\n" }
    return "\n" + FuzzCommand.table([["kind", "seeds", "anomalies", ""]] + rows, rightAligned: [false, true, true, false])
  }

  /// A signature's block: its seeds, kinds, axes, minimal scenario and the command that runs
  /// its first seed again.
  static func signatureBlock(_ campaign: ReportCampaign, index: Int, group g: FuzzFindings.Group, minimal: MinimalScenarioLookup.Found) -> String {
    let seeds = campaign.groupSeeds[index]
    var out = "  signature \(index + 1): \(plural(g.seeds, "seed")) (\(percent(g.seeds, of: campaign.seeds))), first at seed \(g.firstSeed)\n"
    out += field("kinds", g.signature.key.joined(separator: " + "))
    out += field("axes", axesText(campaign, g.signature))
    var listed = seeds.first.map(String.init).joined(separator: ", ")
    if g.seeds > seeds.first.count { listed += " and \(group(g.seeds - seeds.first.count)) more" }
    out += field("seeds", listed)
    out += minimalText(minimal, group: g, campaign: campaign)
    out += command("again", campaign.againCommand(seed: g.firstSeed))
    return out
  }

  /// The axes line: the policy's settings that usually cause the kinds.
  static func axesText(_ campaign: ReportCampaign, _ signature: FuzzSignature) -> String {
    if campaign.appName != nil { return "none: the app's own code is what to look at" }
    if campaign.spec == nil { return "not known: '\(campaign.key.policy)' is not a preset spec (a policy of one's own)" }
    return signature.axes.isEmpty ? "no usual policy axis" : signature.axes.joined(separator: ", ")
  }

  /// Where the minimal scenario is, or why there is none: a path on a line of its own (never
  /// wrapped), then what is known of it.
  static func minimalText(_ found: MinimalScenarioLookup.Found, group g: FuzzFindings.Group, campaign: ReportCampaign) -> String {
    let indent = String(repeating: " ", count: labelWidth)
    func path(_ path: String, _ note: String) -> String {
      "    minimal" + String(repeating: " ", count: labelWidth - 11) + path + "\n"
        + wrap(note, columns: columns - labelWidth).map { indent + $0 + "\n" }.joined()
    }
    switch found {
    case .file(let file, let scenario, let seed):
      let from = seed.map { $0 == g.firstSeed ? "" : ", saved for seed \($0)" } ?? ""
      return path(file, "(\(plural(scenario.timeline.count, "timeline line"))\(from))")
    case .missing(let file, let seed):
      return path(file, "(named by seed \(seed)'s record; not there)")
    case .none:
      if g.kept == nil { return field("minimal", "none: the seed itself replays what the app refused") }
      return field("minimal", "not saved (fuzz --minimize-to DIR saves it; report --html shrinks seed \(g.firstSeed))")
    }
  }

  /// `    label    text`, wrapped to ``columns`` under the text.
  static func field(_ label: String, _ text: String, indent: Int = 4) -> String {
    let start = max(indent == 4 ? labelWidth : indent + 10, indent + label.count + 1)
    let prefix = String(repeating: " ", count: indent) + label + String(repeating: " ", count: start - indent - label.count)
    let lines = wrap(text, columns: columns - start)
    var out = ""
    for (i, line) in lines.enumerated() {
      out += (i == 0 ? prefix : String(repeating: " ", count: start)) + line + "\n"
    }
    return out
  }

  /// A shell command as a field, continued with ` \` where it would pass ``columns``;
  /// continuation lines are indented two more. Only a single word longer than a line (a long
  /// policy spec) makes a line wider.
  static func command(_ label: String, _ command: String) -> String {
    let room = columns - labelWidth - 2  // each line keeps two columns for ` \`
    var lines: [String] = []
    var line = ""
    for word in shellWords(command) {
      if line.isEmpty {
        line = word
      } else if line.count + 1 + word.count <= room {
        line += " " + word
      } else {
        lines.append(line + " \\")
        line = (2 + word.count <= room ? "  " : "") + word
      }
    }
    lines.append(line)
    let prefix = "    " + label + String(repeating: " ", count: max(1, labelWidth - 4 - label.count))
    let indent = String(repeating: " ", count: prefix.count)
    return lines.enumerated().map { i, l in (i == 0 ? prefix : indent) + l }.joined(separator: "\n") + "\n"
  }

  /// Splits a command into its shell words, a quoted word kept whole.
  static func shellWords(_ command: String) -> [String] {
    var words: [String] = []
    var word = ""
    var quoted = false
    for ch in command {
      if ch == "'" { quoted.toggle() }
      if ch == " " && !quoted {
        if !word.isEmpty { words.append(word) }
        word = ""
      } else {
        word.append(ch)
      }
    }
    if !word.isEmpty { words.append(word) }
    return words
  }

  /// Greedy word wrap; a word longer than a line (a path) gets a line of its own; text without
  /// a word is one empty line.
  static func wrap(_ text: String, columns: Int) -> [String] {
    let lines = TextWrap.greedy(text, columns: columns)
    return lines.isEmpty ? [""] : lines
  }

  /// `1,600`.
  static func group(_ n: Int) -> String { BenchCommand.group(Double(n)) }

  /// `1 seed`, `1,600 seeds`.
  static func plural(_ n: Int, _ noun: String) -> String { "\(group(n)) \(noun)\(n == 1 ? "" : "s")" }

  /// `25.8%`: to a tenth, rounded half up, in integers.
  static func percent(_ part: Int, of whole: Int) -> String {
    guard whole > 0 else { return "0%" }
    let tenths = (part * 2_000 + whole) / (2 * whole)
    return "\(tenths / 10).\(tenths % 10)%"
  }

  /// `16th`, `2nd`.
  static func ordinal(_ n: UInt64) -> String {
    let suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th"
    return "\(n)\(suffix)"
  }
}
