import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// What `fuzz` prints: a block per new signature, a block per failing seed with `--verbose`,
/// and the summary. Every function here is pure: the same findings print the same text.
extension FuzzCommand {
  /// What every block needs to know about the campaign.
  struct ReportContext: Sendable {
    var policy: PolicySpec
    var shape: WorkloadShape
    /// The user's app under test, if any (then named in place of the policy).
    var app: AppUnderTest? = nil
    /// `--intents` when given other than the default (the `again` line repeats it).
    var intents: Int?

    /// `policy SPEC`, or `app NAME`.
    var subject: String { app.map { "app \($0.name)" } ?? "policy \(policy)" }
    /// ` --app NAME` for a replay command, or nothing.
    var appArgument: String { app.map { " --app \(CrashReport.shellWord($0.name))" } ?? "" }
  }

  /// How a new signature's minimal scenario is shown.
  enum MinimalScenario {
    /// Written to this path.
    case written(String)
    /// Printed in full (no `--minimize-to`).
    case inline
    /// Not printed: too many signatures to print each scenario in full.
    case withheld
  }

  /// Signatures whose minimal scenario is printed in full when there is no `--minimize-to`; the
  /// ones after say how to save theirs, so that a campaign's output stays a screenful.
  static let inlineScenarios = 3

  /// Signatures printed as a whole block; the ones after (unless `--verbose`) get two lines — the
  /// signature and its minimal scenario — so that a long campaign's output stays a screenful.
  /// `sim-cli report` prints every signature in full from the results file.
  static let fullBlocks = 10

  /// The block for the first seed of a new signature: the signature, the seed's profile, one
  /// anomaly of each kind, the minimal scenario and the commands that replay it. A `brief` block
  /// (for a signature whose kinds all came in earlier ones) leaves out the profile and anomalies;
  /// a `compact` one (after ``fullBlocks`` signatures) is the signature and where its minimal
  /// scenario was saved, or the command that runs its seed again.
  static func signatureReport(
    _ outcome: FuzzOutcome, signature: FuzzSignature, number: Int, brief: Bool, compact: Bool = false, shrunk: Shrinker.Result?,
    scenario: MinimalScenario, context: ReportContext
  ) -> String {
    let seed = outcome.record.seed
    if compact {
      var out = "FAIL \(signature.text) · signature \(number), first at seed \(seed)\n"
      if let shrunk, case .written(let path) = scenario {
        out += "  minimal scenario (\(shrunk.file.timeline.count) timeline lines, keeps \(shrunk.kind.rawValue)): \(path)\n"
      } else {
        out += "  again:     \(againCommand(seed: seed, context: context))\n"
      }
      return out
    }
    var out = "FAIL \(signature.text) · signature \(number), first at seed \(seed) · \(context.subject) · workload \(context.shape.name)\n"
    if brief {
      out += "  (each of its kinds is shown above)\n"
    } else {
      out += "  profile: \(outcome.profile)\n"
      var shown = 0
      for kind in signature.kinds {
        guard let anomaly = outcome.violations.first(where: { $0.kind == kind }) else { continue }
        out += "  • \(anomaly.kind.rawValue) \(anomaly.place): \(anomaly.explanation)\n"
        shown += 1
      }
      if outcome.violations.count > shown { out += "  … and \(outcome.violations.count - shown) more\n" }
      for problem in outcome.appProblems.prefix(3) { out += "  • \(problem)\n" }
      if outcome.appProblems.count > 3 { out += "  … and \(outcome.appProblems.count - 3) more the app refused or could not run\n" }
    }
    if signature.kinds.isEmpty {
      out += "  minimal scenario: not shrunk (no violation to keep: the seed itself replays what the app refused)\n"
    } else {
      out += minimalScenarioLines(shrunk, scenario, appArgument: context.appArgument)
    }
    out += "  again:     \(againCommand(seed: seed, context: context))\n"
    return out
  }

  /// The block for one failing seed (`--verbose`): its profile, its first anomalies, its
  /// signature and the command that runs it again.
  static func seedReport(_ outcome: FuzzOutcome, signature: FuzzSignature, firstSeed: UInt64, context: ReportContext) -> String {
    let seed = outcome.record.seed
    var out = "FAIL seed \(seed) · \(context.subject) · workload \(context.shape.name)\n"
    out += "  profile: \(outcome.profile)\n"
    for anomaly in outcome.violations.prefix(5) {
      out += "  • \(anomaly.kind.rawValue) \(anomaly.place): \(anomaly.explanation)\n"
    }
    if outcome.violations.count > 5 { out += "  … and \(outcome.violations.count - 5) more\n" }
    for problem in outcome.appProblems.prefix(3) { out += "  • \(problem)\n" }
    out += "  signature: \(signature.text)\(firstSeed == seed ? "" : " (first at seed \(firstSeed))")\n"
    out += "  again:     \(againCommand(seed: seed, context: context))\n"
    return out
  }

  static func minimalScenarioLines(_ shrunk: Shrinker.Result?, _ scenario: MinimalScenario, appArgument: String = "") -> String {
    guard let shrunk else { return "  minimal scenario: the shrinker could not reproduce the failure\n" }
    let what = "minimal scenario (\(shrunk.file.timeline.count) timeline lines, keeps \(shrunk.kind.rawValue))"
    // What the minimal scenario itself reports (the seed may have lost more, or otherwise).
    let own = shrunk.violations.first { $0.kind == shrunk.kind }.map { "  in it: \($0.kind.rawValue) \($0.place): \($0.explanation)\n" } ?? ""
    switch scenario {
    case .written(let path):
      return "  \(what): \(path)\n" + own + "  reproduce: \(ToolName.current) run \(CrashReport.shellWord(path))\(appArgument)\n"
    case .inline:
      var out = "  \(what):\n"
      for line in shrunk.text.split(separator: "\n", omittingEmptySubsequences: false) { out += "    | \(line)\n" }
      return out + own
    case .withheld:
      return "  \(what): not printed; pass --minimize-to DIR to save one per signature\n" + own
    }
  }

  /// `sim-cli fuzz --seeds N..N --policy '…'`, with the options that shape the workload.
  static func againCommand(seed: UInt64, context: ReportContext) -> String {
    var command = "\(ToolName.current) fuzz --seeds \(seed)..\(seed)" + (context.app == nil ? " --policy '\(context.policy)'" : context.appArgument)
    if let base = context.shape.base { command += " --scenario \(CrashReport.shellWord(base.source))" }
    if let intents = context.intents { command += " --intents \(intents)" }
    if context.shape.sharing { command += " --sharing" }
    if context.shape.isAssets { command += " --assets" }
    return command
  }

  /// The tables that end a campaign with failing seeds: anomalies by kind (seeds with the kind,
  /// anomalies in all), then the signatures, most seeds first.
  static func summaryTables(_ findings: FuzzFindings) -> String {
    var kindRows: [[String]] = [["kind", "seeds", "anomalies", ""]]
    for informational in [false, true] {
      for (index, kind) in AnomalyKind.allCases.enumerated() where kind.isViolation != informational && findings.seedsByKind[index] > 0 {
        kindRows.append([
          kind.rawValue, BenchCommand.group(Double(findings.seedsByKind[index])), BenchCommand.group(Double(findings.totalsByKind[index])),
          informational ? "informational" : "",
        ])
      }
    }
    var out = "\nby kind:\n" + table(kindRows, rightAligned: [false, true, true, false])
    let ordered = findings.groups.enumerated().sorted { a, b in
      a.element.seeds != b.element.seeds ? a.element.seeds > b.element.seeds : a.element.firstSeed < b.element.firstSeed
    }
    var signatureRows: [(seeds: String, first: String, signature: String)] = []
    for (_, group) in ordered {
      signatureRows.append((BenchCommand.group(Double(group.seeds)), String(group.firstSeed), group.signature.text))
    }
    out += "\nby signature:\n" + signatureTable(signatureRows)
    let saved = findings.groups.filter { $0.minimized != nil }.count
    if saved > 0 {
      out += "  minimal scenarios: \(saved) of \(findings.groups.count) saved, each named in its signature's block above\n"
    } else if !findings.groups.isEmpty {
      out += "  minimal scenarios: not saved (--minimize-to DIR saves them; report --html shrinks them)\n"
    }
    return out
  }

  /// The signatures as rows of seeds, first seed and signature, the signature wrapped to stay
  /// within 100 columns.
  static func signatureTable(_ rows: [(seeds: String, first: String, signature: String)]) -> String {
    let seedsWidth = rows.reduce("seeds".count) { max($0, $1.seeds.count) }
    let firstWidth = rows.reduce("first".count) { max($0, $1.first.count) }
    func pad(_ s: String, _ width: Int) -> String { String(repeating: " ", count: width - s.count) + s }
    let indent = String(repeating: " ", count: 2 + seedsWidth + 2 + firstWidth + 2)
    let width = ReportText.columns - indent.count
    var out = "  \(pad("seeds", seedsWidth))  \(pad("first", firstWidth))  signature\n"
    for row in rows {
      let lines = ReportText.wrap(row.signature, columns: width)
      for (i, line) in lines.enumerated() {
        out += (i == 0 ? "  \(pad(row.seeds, seedsWidth))  \(pad(row.first, firstWidth))  " : indent) + line + "\n"
      }
    }
    return out
  }

  /// Rows as aligned columns, indented two spaces; trailing spaces trimmed.
  static func table(_ rows: [[String]], rightAligned: [Bool]) -> String {
    var widths = [Int](repeating: 0, count: rightAligned.count)
    for row in rows { for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) } }
    var out = ""
    for row in rows {
      var cells: [String] = []
      for (i, cell) in row.enumerated() where i < widths.count {
        let pad = String(repeating: " ", count: widths[i] - cell.count)
        cells.append(rightAligned[i] ? pad + cell : cell + pad)
      }
      var line = "  " + cells.joined(separator: "  ")
      while line.last == " " { line.removeLast() }
      out += line + "\n"
    }
    return out
  }

  /// The command that continues an interrupted campaign: the same options in their declared
  /// order, with `--resume` when there is a results file; without one, the seeds not yet run
  /// (`--seeds NEXT..LAST`). A `--time` budget becomes the time that was left of it.
  static func continueCommand(_ args: ParsedArguments, nextSeed: UInt64, lastSeed: UInt64, timeLeft: Double?) -> String {
    let resumable = args.value("--out") != nil
    var words = [ToolName.current, "fuzz"]
    for option in spec.options {
      let name = option.name
      if name == "--resume" { continue }
      if name == "--seeds" && !resumable {
        words += [name, lastSeed == UInt64.max ? "\(nextSeed).." : "\(nextSeed)..\(lastSeed)"]
        continue
      }
      if name == "--time", args.value(name) != nil, let timeLeft {
        words += [name, "\(max(1, Int(timeLeft.rounded(.up))))s"]
        continue
      }
      if option.valueName == nil {
        if args.has(name) { words.append(name) }
      } else if let value = args.value(name) {
        words += [name, value]
      }
    }
    if resumable { words.append("--resume") }
    return words.map(CrashReport.shellWord).joined(separator: " ")
  }
}
