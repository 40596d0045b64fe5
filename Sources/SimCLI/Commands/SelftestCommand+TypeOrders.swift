import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli selftest --type-orders`: the app fuzz workload on every order of the types of every
/// schema, with every app (``TypeOrderSweep``).
extension SelftestCommand {
  /// The options only `--type-orders` takes.
  static let typeOrderOptions = ["--scenario", "--no-named", "--order", "--intents", "--verbose"]

  /// At most this many seeds (a sweep multiplies them by its orders and apps).
  static let maxSweepSeeds: UInt64 = 10_000_000

  static func typeOrders(_ args: ParsedArguments, _ console: Console) throws -> ExitCode {
    func usage(_ message: String) -> CommandExit {
      console.err(UsageError.other(message).render(command: spec))
      return CommandExit(code: .usage)
    }
    if args.has("--oracles") { throw usage("--type-orders and --oracles cannot be used together: run them one at a time.") }
    for option in ["--workload", "--seed", "--messages"] where args.value(option) != nil {
      throw usage(
        option == "--workload"
          ? "--workload is not allowed with --type-orders: the sweep runs the workload for apps, drawn from each schema in each order."
          : "'\(option)' is the kernel workload's (selftest without --oracles or --type-orders); it is not allowed with --type-orders.")
    }
    if args.value("--format") == "json" { throw usage("--format json is not available with --type-orders: it prints a table.") }
    let text = args.value("--seeds") ?? "1..2000"
    guard let range = SeedRange.parse(text), range.upper - range.lower < maxSweepSeeds else {
      console.err(
        UsageError.invalidValue(
          option: "--seeds", value: text,
          reason: "expected A..B with A <= B and at most \(BenchCommand.group(Double(maxSweepSeeds))) seeds, e.g. 1..2000",
          suggestion: nil
        ).render(command: spec))
      throw CommandExit(code: .usage)
    }
    let jobs = try IntegerOption.jobs(args, spec: spec, console: console)
    let intents = Int(
      try IntegerOption.require(args, "--intents", default: UInt64(WorkloadShape().intents), in: 1...100_000, spec: spec, console: console))
    // The apps: every one this tool was built with, or the one named.
    guard !SimCLI.apps.isEmpty else {
      throw usage(
        "--type-orders runs apps, and this tool was built without apps; build your own with SimCLI.runAsProcess(arguments:apps:) (docs/your-engine.md)."
      )
    }
    var apps = SimCLI.apps
    if let name = args.value("--app"), name != "all" {
      apps = SimCLI.apps.filter { $0.name == name }
      guard !apps.isEmpty else {
        console.err(
          UsageError.invalidValue(
            option: "--app", value: name, reason: "expected all or one of: \(SimCLI.apps.map(\.name).joined(separator: ", "))",
            suggestion: Suggestion.closest(to: name, in: SimCLI.apps.map(\.name))
          ).render(command: spec))
        throw CommandExit(code: .usage)
      }
    }
    // The scenarios: the named ones (as `list` shows them), then the given ones.
    var scenarios: [(argument: String, given: Bool, file: ScenarioFile)] = []
    if !args.has("--no-named") {
      for entry in ScenarioLocator.catalog() {
        do {
          scenarios.append((entry.name, false, try ScenarioLocator.load(entry.name)))
        } catch {
          console.err(
            "Error: the named scenario '\(entry.name)' cannot be swept: \(sentence(error.description)) Run 'sim-cli check \(entry.name)'.\n")
          throw CommandExit(code: .dataError)
        }
      }
    }
    for given in args.all("--scenario") {
      scenarios.append((given, true, try ScenarioOptions.workloadBase(given, console: console)))
    }
    var only: [String]?
    if let order = args.value("--order") {
      only = order.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
    }
    let sweep = TypeOrderSweep(scenarios: scenarios, apps: apps, intents: intents, only: only)
    if sweep.units.isEmpty {
      if let only {
        let all = TypeOrderSweep(scenarios: scenarios, apps: apps, intents: intents)
        var available: [String] = []
        for u in all.units where !available.contains(u.order.joined(separator: ",")) { available.append(u.order.joined(separator: ",")) }
        console.err(
          UsageError.invalidValue(
            option: "--order", value: only.joined(separator: ","),
            reason:
              "no schema swept has its types in this order; expected the names of one schema's types, comma-separated, such as \(available.prefix(3).joined(separator: " or "))",
            suggestion: Suggestion.closest(to: only.joined(separator: ","), in: available)
          ).render(command: spec))
        throw CommandExit(code: .usage)
      }
      throw usage("nothing to sweep: no schema with record types (give --scenario FILE, or leave out --no-named).")
    }
    return sweep.runAndPrint(
      seeds: range.lower...range.upper, jobs: jobs, verbose: args.has("--verbose"), trapSeed: TestHooks.trapSeed(ProcessInfo.processInfo.environment),
      console: console)
  }
}

extension TestHooks {
  /// `SIM_CLI_TEST_TRAP_SEED=N`: `selftest --type-orders` traps when it runs seed N (the test of
  /// the crash report that names the run).
  static func trapSeed(_ environment: [String: String]) -> UInt64? { environment["SIM_CLI_TEST_TRAP_SEED"].flatMap { UInt64($0) } }
}

extension TypeOrderSweep {
  /// Runs the sweep and prints what it planned, a table per app, each distinct diagnostic with
  /// a command that reproduces it, the internal errors, and a summary line; the exit code: 70
  /// with an internal error, 1 with a diagnostic that is not a clear sentence, else 0.
  func runAndPrint(seeds: ClosedRange<UInt64>, jobs: Int, verbose: Bool, trapSeed: UInt64? = nil, console: Console) -> ExitCode {
    console.out(plan(seeds: seeds))
    let perUnit = Int(seeds.upperBound - seeds.lowerBound) + 1
    let runnable = units.filter { $0.problem == nil }.count
    let total = runnable * perUnit
    let clock = WallClock()
    let ticks = ProgressTicks()
    CrashContext.reserve(workers: jobs, heading: "running when it crashed (the order of types, the app, the seed; the command that runs it alone):\n")
    defer { CrashContext.clear() }
    let outcome = run(
      seeds: seeds, jobs: jobs,
      starting: { u in
        if verbose { console.out("unit \(u + 1)/\(self.units.count): \(self.label(unit: u)), seeds \(seeds.lowerBound)..\(seeds.upperBound)\n") }
      },
      running: { worker, u, seed in
        CrashContext.set(worker: worker, "\(self.label(unit: u)), seed \(seed): \(self.reproduction(unit: u, seed: seed))")
        if seed == trapSeed {
          let empty: [Int] = []
          _ = empty[Int(seed)]
        }
      },
      progress: { done in
        let now = clock.elapsedSeconds
        guard ticks.due(now) else { return }
        console.err("selftest --type-orders: \(BenchCommand.group(Double(done)))/\(BenchCommand.group(Double(total))) runs · \(Int(now))s\n")
      })
    let elapsed = clock.elapsedSeconds
    console.out(table(outcome))
    console.out(failingText(outcome))
    console.out(diagnosticsText(outcome))
    let t = outcome.total
    let rate = Double(t.runs) / max(elapsed, 1e-9)
    func n(_ x: Int) -> String { BenchCommand.group(Double(x)) }
    // What the apps made of their workloads: a sweep whose intents they refused tests nothing.
    console.out(
      "the apps' intents: \(n(t.applied)) applied · \(n(t.refusedAsExpected)) refused as expected (the record was not on the device) · \(n(t.refused)) refused\n"
    )
    console.out(
      "type orders: \(n(t.runs)) runs, \(n(t.failing)) failing the oracle, \(n(t.refused)) intents refused, \(n(t.stopped)) stopped with a diagnostic (\(outcome.diagnostics.count) distinct, \(outcome.unclear.count) unclear), \(n(t.internalErrors)) internal errors · \(n(Int(rate.rounded()))) runs/s · \(BenchCommand.format2(elapsed))s with \(jobs) job\(jobs == 1 ? "" : "s")\n"
    )
    if t.internalErrors > 0 { return .internalError }
    return outcome.unclear.isEmpty ? .success : .failure
  }

  /// What the sweep runs: the schemas, their orders, the apps, the seeds.
  func plan(seeds: ClosedRange<UInt64>) -> String {
    var out = ""
    let (named, given) = scenarioCounts
    let scenarios = named + given
    let anyTypes = apps.filter { $0.schema == nil }
    let stating = apps.filter { $0.schema != nil }
    // (Every app of any types runs the same orders: count the first one's.)
    let first = units.first { $0.source != nil }?.app
    let orders = units.filter { $0.source != nil && $0.app == first }.count
    out +=
      "schemas: \(sources.count), of \(scenarios) scenario\(scenarios == 1 ? "" : "s") (\(named) named, \(given) given; \(scenarios - sources.count) with a schema swept already) · \(orders) order\(orders == 1 ? "" : "s") of their types\n"
    for note in notes { out += "  \(note)\n" }
    if !stating.isEmpty {
      let ownOrders = units.filter { $0.source == nil }.count
      out +=
        "apps: \(apps.count) — \(anyTypes.count) of any types on every order above; \(stating.count) stating their schema (\(stating.map(\.name).joined(separator: ", "))) on the orders of their own, \(ownOrders) in all (a scenario's schema does not reach them, as with fuzz --app)\n"
    } else {
      out += "apps: \(apps.count), each on every order above\n"
    }
    let perUnit = seeds.upperBound - seeds.lowerBound + 1
    out +=
      "runs: \(BenchCommand.group(Double(units.count))) (order, app) pairs × seeds \(seeds.lowerBound)..\(seeds.upperBound) = \(BenchCommand.group(Double(UInt64(units.count) * perUnit))), \(intents) intent\(intents == 1 ? "" : "s") each\n\n"
    return out
  }

  /// One row per app: its orders, runs, failing runs, refused intents, stopped runs, internal
  /// errors; then the totals.
  func table(_ outcome: Outcome) -> String {
    let header = ["app", "orders", "runs", "failing", "refused", "stopped", "internal"]
    func row(_ name: String, _ t: AppTally) -> [String] {
      [name] + [t.orders, t.runs, t.failing, t.refused, t.stopped, t.internalErrors].map { BenchCommand.group(Double($0)) }
    }
    var rows = [header]
    for (a, app) in apps.enumerated() { rows.append(row(app.name, outcome.byApp[a])) }
    rows.append(row("total", outcome.total))
    let widths = header.indices.map { c in rows.map { $0[c].count }.max() ?? 0 }
    var out = ""
    for r in rows {
      var line = r[0].padding(toLength: widths[0], withPad: " ", startingAt: 0)
      for c in 1..<r.count { line += "  " + String(repeating: " ", count: widths[c] - r[c].count) + r[c] }
      out += line + "\n"
    }
    return out
  }

  /// Each app's first run that failed the oracle (the app's bug, not the sweep's), with the
  /// command that runs it.
  func failingText(_ outcome: Outcome) -> String {
    var out = ""
    for (a, app) in apps.enumerated() {
      guard let first = outcome.byApp[a].firstFailing else { continue }
      let (u, seed) = (first.unit, first.seed)
      if out.isEmpty { out = "\nfirst run failing the oracle, per app (the app's bug, not the sweep's):\n" }
      out +=
        "  \(app.name), seed \(seed) [\(units[u].order.joined(separator: " "))]: \(fuzzCommand(unit: u, seed: seed) ?? reproduction(unit: u, seed: seed))\n"
    }
    return out
  }

  /// The diagnostics, each reason once with its runs and the command that runs its first; the
  /// internal errors.
  func diagnosticsText(_ outcome: Outcome) -> String {
    var out = ""
    if !outcome.diagnostics.isEmpty {
      out += "\ndiagnostics — a device's app stopped, each reason once (first run):\n"
      for d in outcome.diagnostics {
        out += "  \(d.unclear == nil ? "•" : "✗ unclear (\(d.unclear!)):") \(d.reason)\n"
        out += "    \(d.runs) run\(d.runs == 1 ? "" : "s"), first \(label(unit: d.unit)), seed \(d.seed)\n"
        out += "    reproduce: \(reproduction(unit: d.unit, seed: d.seed))\n"
        if let fuzz = fuzzCommand(unit: d.unit, seed: d.seed) { out += "    (also: \(fuzz))\n" }
      }
    }
    if !outcome.internalErrors.isEmpty {
      out += "\ninternal errors — \(InternalErrorReport.request)\n"
      for (u, message) in outcome.internalErrors {
        out += "  ✗ \(label(unit: u)): \(message)\n"
        out += "    reproduce: \(reproduction(unit: u, seed: 1))\n"
      }
    }
    return out + "\n"
  }
}

/// Whether a progress line is due (every 30 s of wall-clock time).
final class ProgressTicks: @unchecked Sendable {
  private var last = 0.0
  func due(_ now: Double) -> Bool {
    guard now - last >= 30 else { return false }
    last = now
    return true
  }
}
