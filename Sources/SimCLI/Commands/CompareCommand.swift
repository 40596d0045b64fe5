import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli compare`: policies × scenarios → violation counts by kind and % of seeds failing.
enum CompareCommand {
  static let spec = CommandSpec(
    name: "compare", summary: "Table of policies × scenarios → violation counts by kind and % of seeds failing.",
    discussion: """
      Scenarios default to every named scenario plus the default fuzz workload ('default');
      policies to every preset. A named scenario is run with each seed (its network draws
      change); the fuzz workload draws a new profile and timeline per seed.
      """,
    options: [
      .value("--scenario", "FILE|NAME", "A scenario to include (repeatable); 'default' is the fuzz workload.", repeatable: true),
      .value("--policies", "all|P,P", "The policies to compare (default all presets)."),
      .value("--seeds", "A..B", "The seeds to run each pair on (default 1..20)."),
      .value("--jobs", "N", "Parallel workers; the core count by default."),
      .value("--format", "FORMAT", "Output format.", choices: ["text", "json", "markdown"]),
    ],
    examples: ["sim-cli compare --format markdown", "sim-cli compare --scenario default --policies cloudkit-default,append-only --seeds 1..1000"])

  static let command = Command(spec: spec) { args, console in
    do throws(CommandExit) {
      return try run(args, console)
    } catch {
      return error.code
    }
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
    var subjects: [Comparison.Subject] = []
    var names: [String] = []
    for name in args.all("--scenario").isEmpty ? ScenarioLocator.named().map(\.name) + ["default"] : args.all("--scenario") {
      if names.contains(name) {
        console.err("warning: scenario '\(name)' given twice; compared once\n")
      } else {
        names.append(name)
      }
    }
    for name in names {
      if name == "default" {
        subjects.append(.workload(WorkloadShape()))
      } else {
        subjects.append(.scenario(try ScenarioOptions.load(name, console: console)))
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
    let cells = Comparison(policies: policies, subjects: subjects, seeds: seeds, jobs: jobs).run()
    switch args.value("--format") ?? "text" {
    case "json":
      let value = JSONValue.array(
        cells.map { c in
          var counts: [String: JSONValue] = [:]
          for (i, k) in AnomalyKind.allCases.enumerated() { counts[k.rawValue] = .int(Int64(c.counts[i])) }
          return [
            "policy": .string(c.policy), "scenario": .string(c.scenario), "seeds": .int(Int64(c.seeds)),
            "failingSeeds": .int(Int64(c.failingSeeds)), "counts": .object(counts),
          ]
        })
      console.out(value.serialized() + "\n")
    case "markdown":
      console.out(table(cells, policies: policies, subjects: subjects, markdown: true))
    default:
      console.out(table(cells, policies: policies, subjects: subjects, markdown: false))
    }
    return .success
  }

  /// Two tables: % of seeds failing per policy × scenario, then violations by kind per policy.
  static func table(_ cells: [Comparison.Cell], policies: [PolicySpec], subjects: [Comparison.Subject], markdown: Bool) -> String {
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
    out += (markdown ? "**% of seeds with a violation** (\(seedsNote))\n\n" : "% of seeds with a violation (\(seedsNote))\n\n")
    out += render(rows, markdown: markdown)
    out +=
      (markdown ? "\n**Violations by kind** (summed over scenarios and seeds)\n\n" : "\nviolations by kind (summed over scenarios and seeds)\n\n")
    out += render(kinds, markdown: markdown)
    return out
  }

  static func percent(_ x: Double) -> String {
    let tenths = Int((x * 10).rounded())
    return tenths % 10 == 0 ? "\(tenths / 10)%" : "\(tenths / 10).\(tenths % 10)%"
  }

  static func render(_ rows: [[String]], markdown: Bool) -> String {
    let widths = rows[0].indices.map { i in rows.map { $0[i].count }.max() ?? 0 }
    var out = ""
    for (r, row) in rows.enumerated() {
      let cells = row.enumerated().map { i, s in
        i == 0 ? s + String(repeating: " ", count: widths[i] - s.count) : String(repeating: " ", count: widths[i] - s.count) + s
      }
      out += markdown ? "| " + cells.joined(separator: " | ") + " |\n" : cells.joined(separator: "  ") + "\n"
      if markdown && r == 0 {
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
