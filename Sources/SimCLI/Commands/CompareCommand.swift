import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli compare`: scenarios × policies → violation counts by kind and seeds with a violation.
enum CompareCommand {
  static let spec = CommandSpec(
    name: "compare", summary: "Table of scenarios × policies → violation counts by kind and seeds with a violation.",
    discussion: """
      Scenarios default to every scenario 'sim-cli list' shows — the built-in ones and your
      own in scenarios/ folders or $CONFLICT_SIM_SCENARIOS, a file of yours winning over a
      built-in one of the same name, as with 'run' — plus the default fuzz workload ('default');
      policies to every preset. A named scenario is run with each seed (its network draws
      change); the fuzz workload draws a new profile and timeline per seed.

      The text table has a row per scenario and a column per policy (P1, P2, … with a legend),
      split into several tables to stay within 100 columns; a cell reads '3: 4L 1R': 3 seeds
      with a violation, 4 lost edits and 1 resurrection over all seeds. Progress goes to stderr.
      """,
    options: [
      .value("--scenario", "FILE|NAME", "A scenario to include (repeatable); 'default' is the fuzz workload.", repeatable: true),
      .value("--policies", "all|P,P", "The policies to compare (default all presets)."),
      .value("--seeds", "A..B", "The seeds to run each pair on (default 1..20)."),
      .value("--jobs", "N", "Parallel workers; the core count by default."),
      .value("--format", "FORMAT", "Output format (default text: fits 100 columns).", choices: ["text", "json", "markdown"]),
    ],
    examples: ["sim-cli compare --format markdown", "sim-cli compare --scenario default --policies cloudkit-default,append-only --seeds 1..1000"])

  static let command = Command(spec: spec) { args, console in
    do throws(CommandExit) {
      return try run(args, console)
    } catch {
      return error.code
    }
  }

  /// A subject with where it comes from: `built-in`, a folder (`./scenarios/`), `file` for a
  /// path on the command line, `workload` for the fuzz workload.
  struct Subject: Sendable {
    var subject: Comparison.Subject
    var origin: String
  }

  static func run(_ args: ParsedArguments, _ console: Console) throws(CommandExit) -> ExitCode {
    var policies: [PolicySpec] = []
    let policyText = args.value("--policies") ?? "all"
    if policyText == "all" {
      policies = PolicyPreset.all.map { try! PolicySpec.parse($0.name).get() }
    } else {
      for name in policyText.split(separator: ",").map({ String($0).trimmingCharacters(in: .whitespaces) }) {
        switch PolicySpec.parse(name) {
        case .success(let p): policies.append(p)
        case .failure(let e):
          console.err(UsageError.invalidValue(option: "--policies", value: name, reason: e.message, suggestion: nil).render(command: spec))
          throw CommandExit(code: .usage)
        }
      }
    }
    // A policy or scenario named twice is compared once.
    var seenPolicies: [String] = []
    policies = policies.filter { p in
      guard !seenPolicies.contains(p.description) else {
        console.err("warning: policy '\(p)' given twice; compared once\n")
        return false
      }
      seenPolicies.append(p.description)
      return true
    }
    var subjects: [Subject] = []
    var names: [String] = []
    let folders = ScenarioLocator.folders()
    for name in args.all("--scenario").isEmpty ? ScenarioLocator.catalog(in: folders).map(\.name) + ["default"] : args.all("--scenario") {
      if names.contains(name) {
        console.err("warning: scenario '\(name)' given twice; compared once\n")
      } else {
        names.append(name)
      }
    }
    for name in names {
      if name == "default" {
        subjects.append(Subject(subject: .workload(WorkloadShape()), origin: "workload"))
      } else {
        let file = try ScenarioOptions.load(name, console: console)
        let origin = Scenario.isPath(name) ? "file" : ScenarioLocator.locate(name, in: folders)?.label ?? "built-in"
        subjects.append(Subject(subject: .scenario(file), origin: origin))
      }
    }
    var seeds: ClosedRange<UInt64> = 1...20
    if let text = args.value("--seeds") {
      guard let r = SeedRange.parse(text) else {
        console.err(
          UsageError.invalidValue(option: "--seeds", value: text, reason: "expected A..B with A <= B", suggestion: nil).render(command: spec))
        throw CommandExit(code: .usage)
      }
      seeds = r.lower...r.upper
    }
    let jobs = try IntegerOption.jobs(args, spec: spec, console: console)
    let span = seeds.upperBound - seeds.lowerBound
    let seedsPerRun = span >= UInt64(Int.max) ? Int.max : Int(span) + 1
    let progress = CompareProgress.standard(total: policies.count * subjects.count, seedsPerRun: seedsPerRun, console: console)
    let cells = compare(policies: policies, subjects: subjects.map(\.subject), seeds: seeds, jobs: jobs, progress: progress)
    switch args.value("--format") ?? "text" {
    case "json":
      let value = JSONValue.array(
        cells.enumerated().map { index, c in
          var counts: [String: JSONValue] = [:]
          for (i, k) in AnomalyKind.allCases.enumerated() { counts[k.rawValue] = .int(Int64(c.counts[i])) }
          return [
            "policy": .string(c.policy), "scenario": .string(c.scenario), "seeds": .int(Int64(c.seeds)),
            "failingSeeds": .int(Int64(c.failingSeeds)), "counts": .object(counts), "origin": .string(subjects[index % subjects.count].origin),
          ]
        })
      console.out(value.serialized() + "\n")
    case "markdown":
      console.out(markdownTables(cells, policies: policies, subjects: subjects.map(\.subject)))
    default:
      let text = CompareTextTable(
        policies: policies.map(\.description), subjects: subjects.map { ($0.subject.name, $0.origin) }, cells: cells, seeds: seeds)
      console.out(text.rendered())
    }
    return .success
  }

  /// Every policy on every subject, cells in policy-major order (as ``Comparison/run()``), with
  /// a progress tick per pair.
  static func compare(
    policies: [PolicySpec], subjects: [Comparison.Subject], seeds: ClosedRange<UInt64>, jobs: Int, progress: CompareProgress
  ) -> [Comparison.Cell] {
    let pairs = policies.flatMap { p in subjects.map { (p, $0) } }
    let results = CellSlots(count: pairs.count)
    progress.start()
    let work: @Sendable (Int) -> Void = { _ in
      while let i = results.take() {
        let cell = Comparison(policies: [pairs[i].0], subjects: [pairs[i].1], seeds: seeds, jobs: 1).run()[0]
        results.set(i, cell)
        progress.tick()
      }
    }
    let workers = max(1, min(jobs, pairs.count))
    if workers == 1 { work(0) } else { DispatchQueue.concurrentPerform(iterations: workers, execute: work) }
    progress.finish()
    return results.values
  }

  /// `--format markdown`: two tables, % of seeds failing per policy × scenario, then violations
  /// by kind per policy. (The text table is ``CompareTextTable``.)
  static func markdownTables(_ cells: [Comparison.Cell], policies: [PolicySpec], subjects: [Comparison.Subject]) -> String {
    let seedsNote = cells.first.map { "\($0.seeds) seeds each" } ?? ""
    // Cells come in policy-major order: policy p's row is cells[p * subjects.count ..< (p + 1) * subjects.count].
    func row(_ p: Int) -> ArraySlice<Comparison.Cell> { cells[(p * subjects.count)..<min(cells.count, (p + 1) * subjects.count)] }
    var rows: [[String]] = [["policy"] + subjects.map(\.name)]
    for (p, policy) in policies.enumerated() {
      rows.append([policy.description] + row(p).map { c in c.failingSeeds == 0 ? "0" : percent(c.failingPercent) })
    }
    let violationKinds = AnomalyKind.allCases.filter(\.isViolation)
    var kinds: [[String]] = [["policy"] + violationKinds.map(\.rawValue)]
    for (p, policy) in policies.enumerated() {
      kinds.append([policy.description] + violationKinds.map { k in String(row(p).reduce(0) { $0 + $1.counts[k.ordinal] }) })
    }
    var out = ""
    out += "**% of seeds with a violation** (\(seedsNote))\n\n"
    out += markdown(rows)
    out += "\n**Violations by kind** (summed over scenarios and seeds)\n\n"
    out += markdown(kinds)
    return out
  }

  static func percent(_ x: Double) -> String {
    let tenths = Int((x * 10).rounded())
    return tenths % 10 == 0 ? "\(tenths / 10)%" : "\(tenths / 10).\(tenths % 10)%"
  }

  /// A markdown table: the first row is the heading; the first column reads from the left, the
  /// others are numbers aligned right.
  static func markdown(_ rows: [[String]]) -> String {
    let widths = rows[0].indices.map { i in rows.map { $0[i].count }.max() ?? 0 }
    var out = ""
    for (r, row) in rows.enumerated() {
      let cells = row.enumerated().map { i, s in
        i == 0 ? s + String(repeating: " ", count: widths[i] - s.count) : String(repeating: " ", count: widths[i] - s.count) + s
      }
      out += "| " + cells.joined(separator: " | ") + " |\n"
      if r == 0 {
        out +=
          "|"
          + widths.enumerated().map { i, w in
            i == 0 ? " " + String(repeating: "-", count: w) + " " : " " + String(repeating: "-", count: w - 1) + ": "
          }.joined(separator: "|") + "|\n"
      }
    }
    return out
  }
}

/// Cells filled by several workers, and the next pair to run.
final class CellSlots: @unchecked Sendable {
  private let lock = NSLock()
  private var slots: [Comparison.Cell?]
  private var next = 0

  init(count: Int) { slots = Array(repeating: nil, count: count) }

  /// The next pair to run, nil when all are taken.
  func take() -> Int? {
    lock.withLock {
      guard next < slots.count else { return nil }
      defer { next += 1 }
      return next
    }
  }

  func set(_ i: Int, _ cell: Comparison.Cell) { lock.withLock { slots[i] = cell } }

  var values: [Comparison.Cell] { lock.withLock { slots.compactMap { $0 } } }
}
