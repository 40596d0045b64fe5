import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli selftest --type-orders`: the app fuzz workload on every schema of the named
/// scenarios (and any given), with its `type` declarations in every order, × every app, × the
/// seeds — the proof that the app path knows each record's type whatever the order: an app that
/// cannot make an intent refuses it (counted), an app's code that cannot go on stops its device
/// with a sentence that says why (listed), and nothing is an internal error.
///
/// A run is what `sim-cli fuzz --app APP --scenario FILE --seeds N..N` runs, on the scenario's
/// schema reordered (rendered with its types in the new order and parsed again). An app that
/// states its schema draws its workload from it, not from the scenario's (as `fuzz --app` does):
/// it runs on every order of its own schema instead.
package struct TypeOrderSweep: Sendable {
  /// A schema swept: the first scenario (in name order, the given ones after) that has it.
  package struct Source: Sendable {
    /// How the command line names it: a named scenario's name, or `--scenario`'s argument.
    package var argument: String
    /// Whether it came from `--scenario` (else it is a named scenario).
    package var given: Bool
    /// The scenario as loaded.
    package var file: ScenarioFile
    /// The other scenarios with the same schema, left out.
    package var sameSchema: [String] = []
  }

  /// One order of one schema with one app: the seeds of the sweep run on it.
  package struct Unit: Sendable {
    /// The app's position in ``apps``.
    package var app: Int
    /// The scenario whose schema is reordered (its position in ``sources``); nil: the app's own.
    package var source: Int?
    /// The types' names in the order they are declared.
    package var order: [String]
    /// Whether ``order`` is the order the schema declares (then `sim-cli fuzz` runs it as is).
    package var declared: Bool
    /// The workload: the reordered scenario as its base, or the app's reordered schema.
    package var shape: WorkloadShape
    /// The app as run: for an app that states its schema, with that schema reordered.
    package var runs: AppUnderTest
    /// Why the reordered schema could not be made (an internal error: nothing of the unit runs).
    package var problem: String?
  }

  /// Orders of types left out (a schema with more than ``maxPermuted`` types), in words.
  package var notes: [String] = []
  /// The schemas swept, each once.
  package var sources: [Source]
  /// The scenarios with record types the sweep was given: named ones, and `--scenario` ones.
  package var scenarioCounts = (named: 0, given: 0)
  /// The apps, in the order of the table.
  package var apps: [AppUnderTest]
  /// Every (order, app) pair, schema by schema within each app, app by app.
  package var units: [Unit]
  /// Intents per seed.
  package var intents: Int

  /// A schema with more types than this is not run in every order (7 types have 5,040): only
  /// its rotations and their reversals.
  package static let maxPermuted = 6

  /// The sweep of `scenarios` (each with how the command line names it and whether it was
  /// given with `--scenario`) × `apps`, schemas deduplicated; `only` keeps the units of that one
  /// order of types.
  package init(scenarios: [(argument: String, given: Bool, file: ScenarioFile)], apps: [AppUnderTest], intents: Int, only: [String]? = nil) {
    self.apps = apps
    self.intents = intents
    sources = []
    for s in scenarios where !s.file.schema.types.isEmpty {
      if s.given { scenarioCounts.given += 1 } else { scenarioCounts.named += 1 }
      if let i = sources.firstIndex(where: { Self.sameSchema($0.file.schema, s.file.schema) }) {
        sources[i].sameSchema.append(s.argument)
      } else {
        sources.append(Source(argument: s.argument, given: s.given, file: s.file))
      }
    }
    // Each scenario's orders, reordered once for every app of any types.
    var reorderings: [[(order: [Int], base: Result<ScenarioFile, SweepProblem>)]?] = Array(repeating: nil, count: sources.count)
    units = []
    for (a, app) in apps.enumerated() {
      if let own = app.schema {
        let permutations = Self.orders(of: own.types.count)
        if own.types.count > Self.maxPermuted, !notes.contains(where: { $0.hasPrefix("\(app.name)'s own schema ") }) {
          notes.append(Self.note(own.types.count, what: "\(app.name)'s own schema", orders: permutations.count))
        }
        for p in permutations {
          let names = p.map { own.types[$0].name }
          if let only, only != names { continue }
          var schema = own
          schema.types = p.map { own.types[$0] }
          let reordered = AppUnderTest(
            name: app.name, schema: schema, schemaProblem: app.schemaProblem, reusesNames: app.reusesNames, sharesRecords: app.sharesRecords,
            drivers: app.drivers)
          units.append(
            Unit(
              app: a, source: nil, order: names, declared: p == Array(p.indices), shape: WorkloadShape(intents: intents), runs: reordered,
              problem: nil))
        }
        continue
      }
      for (s, source) in sources.enumerated() {
        let types = source.file.schema.types
        if reorderings[s] == nil {
          let permutations = Self.orders(of: types.count)
          if types.count > Self.maxPermuted {
            notes.append(Self.note(types.count, what: "the schema of \(source.argument)", orders: permutations.count))
          }
          reorderings[s] = permutations.map { ($0, Self.reordered(source.file, order: $0)) }
        }
        for (p, base) in reorderings[s]! {
          let names = p.map { types[$0].name }
          if let only, only != names { continue }
          var unit = Unit(
            app: a, source: s, order: names, declared: p == Array(p.indices), shape: WorkloadShape(intents: intents), runs: app, problem: nil)
          switch base {
          case .success(let file): unit.shape.base = file
          case .failure(let problem): unit.problem = problem.message
          }
          units.append(unit)
        }
      }
    }
  }

  /// Why a reordered schema could not be made.
  package struct SweepProblem: Error, Sendable {
    package var message: String
  }

  /// Whether two schemas are the same: types, fields and what is deployed (not where they came from).
  static func sameSchema(_ a: Schema, _ b: Schema) -> Bool { a.types == b.types && a.deployed == b.deployed }

  /// `"the schema of big has 8 types (40,320 orders): swept in its 8 rotations and their reversals, 16 orders"`.
  static func note(_ count: Int, what: String, orders: Int) -> String {
    let all = (1...count).reduce(1) { $0 * $1 }
    return
      "\(what) has \(count) types (\(BenchCommand.group(Double(all))) orders): swept in its \(count) rotations and their reversals, \(orders) orders"
  }

  /// The orders of `count` types, as positions in the declared order, the declared order first:
  /// every permutation (in lexicographic order) up to ``maxPermuted`` types; beyond, every
  /// rotation and the reversal of each.
  package static func orders(of count: Int) -> [[Int]] {
    guard count > 0 else { return [] }
    if count > maxPermuted {
      var out: [[Int]] = []
      for r in 0..<count {
        let rotation = (0..<count).map { ($0 + r) % count }
        out.append(rotation)
      }
      for r in 0..<count {
        let reversal = Array(out[r].reversed())
        if !out.contains(reversal) { out.append(reversal) }
      }
      return out
    }
    var out: [[Int]] = []
    var current: [Int] = []
    var used = [Bool](repeating: false, count: count)
    func extend() {
      if current.count == count {
        out.append(current)
        return
      }
      for i in 0..<count where !used[i] {
        used[i] = true
        current.append(i)
        extend()
        current.removeLast()
        used[i] = false
      }
    }
    extend()
    return out
  }

  /// `file` with its types declared in `order` (positions in its declared order): its header and
  /// types rendered by the scenario writer with the types reordered, and parsed again. A failure
  /// is the simulator's (the writer or the parser), never the user's.
  package static func reordered(_ file: ScenarioFile, order: [Int]) -> Result<ScenarioFile, SweepProblem> {
    var shaped = file
    shaped.schema.types = order.map { file.schema.types[$0] }
    // (Only the devices and the schema shape a workload: the timeline is left out.)
    shaped.timeline = []
    shaped.expectations = []
    let names = shaped.schema.types.map(\.name).joined(separator: ", ")
    switch Scenario.parse(shaped.rendered(), source: file.source) {
    case .success(let parsed):
      guard sameSchema(parsed.schema, shaped.schema) else {
        return .failure(
          SweepProblem(
            message:
              "\(file.name)'s schema, with its types in the order \(names), parsed back as another schema (the writer or the parser lost something)"))
      }
      return .success(parsed)
    case .failure(let errors):
      return .failure(
        SweepProblem(
          message:
            "\(file.name)'s schema, with its types in the order \(names), does not parse once written: \(errors.rendered().split(separator: "\n").first ?? "")"
        ))
    }
  }

  // MARK: Running

  /// What the runs of one app came to.
  package struct AppTally: Sendable, Equatable {
    /// Orders of types the app ran on.
    package var orders = 0
    package var runs = 0
    /// Runs in which the oracle found a violation (the app's bug: expected of a planted app).
    package var failing = 0
    /// Intents the app made, refused as expected (the record was not on the device), and
    /// refused though it could have made them (each in its run's report).
    package var applied = 0
    package var refusedAsExpected = 0
    package var refused = 0
    /// Runs in which a device's app code stopped with a diagnostic.
    package var stopped = 0
    /// Internal errors: units whose reordered schema could not be made.
    package var internalErrors = 0
    /// The first run that failed the oracle, if any.
    package var firstFailing: RunID?

    mutating func add(_ o: AppTally) {
      orders += o.orders
      runs += o.runs
      failing += o.failing
      applied += o.applied
      refusedAsExpected += o.refusedAsExpected
      refused += o.refused
      stopped += o.stopped
      internalErrors += o.internalErrors
      if let theirs = o.firstFailing, firstFailing.map({ theirs < $0 }) ?? true { firstFailing = theirs }
    }
  }

  /// One run: a unit (its position in ``units``) and a seed; ordered unit first.
  package struct RunID: Sendable, Equatable, Comparable {
    package var unit: Int
    package var seed: UInt64
    package static func < (a: RunID, b: RunID) -> Bool { (a.unit, a.seed) < (b.unit, b.seed) }
  }

  /// One distinct reason a device's app stopped: how many runs, and the first (unit, seed).
  package struct Diagnostic: Sendable, Equatable {
    package var reason: String
    package var runs: Int
    package var unit: Int
    package var seed: UInt64
    /// Why the reason is not a clear sentence, when it is not.
    package var unclear: String?
  }

  /// What the sweep came to: per app, the distinct diagnostics in the order of their first run,
  /// the internal errors.
  package struct Outcome: Sendable {
    package var byApp: [AppTally]
    package var diagnostics: [Diagnostic]
    /// Units whose reordered schema could not be made, with why.
    package var internalErrors: [(unit: Int, message: String)]
    package var total: AppTally {
      byApp.reduce(into: AppTally()) { $0.add($1) }
    }
    /// Diagnostics that are not a clear sentence.
    package var unclear: [Diagnostic] { diagnostics.filter { $0.unclear != nil } }
  }

  /// What one run came to.
  struct RunResult {
    var failing: Bool
    var applied: Int
    var refusedAsExpected: Int
    var refused: Int
    /// The distinct reasons its devices' apps stopped (the device and time taken off), sorted.
    var stops: [String]
  }

  /// Runs one seed of one unit.
  func run(_ unit: Unit, seed: UInt64) -> RunResult {
    let c = Fuzzer.run(seed: seed, shape: unit.shape, app: unit.runs)
    let counts = c.report.appIntents
    return RunResult(
      failing: c.record.violations > 0, applied: counts?.applied ?? 0, refusedAsExpected: counts?.refusedAsExpected ?? 0,
      refused: counts?.refused.count ?? 0, stops: Array(Set(c.report.appErrors.map(Self.reason))).sorted())
  }

  /// `phone at 4.000s: the delegate's call waited …` without `phone at 4.000s: `.
  static func reason(_ error: String) -> String {
    guard let at = error.range(of: " at "), let colon = error.range(of: ": ", range: at.upperBound..<error.endIndex) else { return error }
    let head = error[..<at.lowerBound]
    let time = error[at.upperBound..<colon.lowerBound]
    guard !head.contains(" "), !time.contains(" ") else { return error }
    return String(error[colon.upperBound...])
  }

  /// Why a diagnostic is not a clear sentence, or nil when it is one: it must say what happened
  /// in words (six or more), not read as a crash or a value dumped for debugging.
  package static func unclearness(_ reason: String) -> String? {
    for marker in ["Fatal error", "out of range", "Optional(", "Swift.", "unexpectedly found nil", "EXC_", "precondition", "assertion failed"]
    where reason.contains(marker) {
      return "it reads like a crash or a debug dump ('\(marker)')"
    }
    let words = reason.split(whereSeparator: \.isWhitespace)
    if words.count < 6 { return "\(words.count) word\(words.count == 1 ? "" : "s") cannot say what the app did and what to do" }
    guard let first = reason.unicodeScalars.first, first.properties.isAlphabetic || first == "\"" || first == "'" else {
      return "it does not begin as a sentence"
    }
    return nil
  }

  /// Runs every unit on every seed of `seeds`, `jobs` at a time; the outcome is the same for any
  /// `jobs`. `starting(unit)` is called once per unit, in unit order, before its first seed runs;
  /// `running(worker, unit, seed)` on the worker's thread before each run (what the crash report
  /// names); `progress(done)` now and then, between runs.
  package func run(
    seeds: ClosedRange<UInt64>, jobs: Int, starting: @escaping @Sendable (Int) -> Void = { _ in },
    running: @escaping @Sendable (Int, Int, UInt64) -> Void = { _, _, _ in }, progress: @escaping @Sendable (Int) -> Void = { _ in }
  ) -> Outcome {
    let perUnit = Int(seeds.upperBound - seeds.lowerBound) + 1
    let work = SweepWork(units: units.count, perUnit: perUnit, runnable: units.map { $0.problem == nil })
    let workers = max(1, jobs)
    let partials = (0..<workers).map { _ in PartialOutcome(apps: apps.count) }
    let tool = ToolName.current
    let body: @Sendable (Int) -> Void = { worker in
      ToolName.$current.withValue(tool) {
        let mine = partials[worker]
        while let batch = work.take(starting: starting, progress: progress) {
          for index in batch {
            let (u, offset) = index.quotientAndRemainder(dividingBy: perUnit)
            let seed = seeds.lowerBound + UInt64(offset)
            running(worker, u, seed)
            mine.add(run(units[u], seed: seed), unit: u, app: units[u].app, seed: seed)
          }
        }
      }
    }
    if workers == 1 { body(0) } else { DispatchQueue.concurrentPerform(iterations: workers, execute: body) }
    // Merged in worker order; every merge is a sum or a minimum, so any `jobs` gives the same.
    var byApp = [AppTally](repeating: AppTally(), count: apps.count)
    var diagnostics: [String: Diagnostic] = [:]
    for p in partials {
      for (a, t) in p.byApp.enumerated() { byApp[a].add(t) }
      for (reason, d) in p.diagnostics {
        if var seen = diagnostics[reason] {
          seen.runs += d.runs
          if (d.unit, d.seed) < (seen.unit, seen.seed) { (seen.unit, seen.seed) = (d.unit, d.seed) }
          diagnostics[reason] = seen
        } else {
          diagnostics[reason] = d
        }
      }
    }
    var internalErrors: [(Int, String)] = []
    for (u, unit) in units.enumerated() {
      byApp[unit.app].orders += 1
      if let problem = unit.problem {
        byApp[unit.app].internalErrors += 1
        internalErrors.append((u, problem))
      }
    }
    let sorted = diagnostics.values.sorted { ($0.unit, $0.seed, $0.reason) < ($1.unit, $1.seed, $1.reason) }
    return Outcome(byApp: byApp, diagnostics: sorted, internalErrors: internalErrors)
  }

  // MARK: Words

  /// The command that runs `seed` of `unit` alone (and prints its diagnostics, or crashes there).
  package func reproduction(unit u: Int, seed: UInt64) -> String {
    let unit = units[u]
    var words = [ToolName.current, "selftest", "--type-orders"]
    if let s = unit.source { words += ["--no-named", "--scenario", sources[s].argument] }
    words += ["--order", unit.order.joined(separator: ","), "--app", apps[unit.app].name, "--seeds", "\(seed)..\(seed)"]
    if intents != WorkloadShape().intents { words += ["--intents", "\(intents)"] }
    return words.map(CrashReport.shellWord).joined(separator: " ")
  }

  /// For a unit in its declared order, the `fuzz` command that runs the same seed; nil otherwise.
  package func fuzzCommand(unit u: Int, seed: UInt64) -> String? {
    let unit = units[u]
    guard unit.declared else { return nil }
    var words = [ToolName.current, "fuzz", "--app", apps[unit.app].name]
    if let s = unit.source { words += ["--scenario", sources[s].argument] }
    words += ["--seeds", "\(seed)..\(seed)"]
    if intents != WorkloadShape().intents { words += ["--intents", "\(intents)"] }
    return words.map(CrashReport.shellWord).joined(separator: " ")
  }

  /// `two-device-acceptance: Preference, Note, Stroke × NotesApp`, or `RemindersApp's own: Reminder, List`.
  package func label(unit u: Int) -> String {
    let unit = units[u]
    let schema = unit.source.map { sources[$0].argument } ?? "\(apps[unit.app].name)'s own schema"
    return "\(schema) [\(unit.order.joined(separator: " "))] × \(apps[unit.app].name)"
  }
}

/// Hands out the sweep's runs, a few at a time, in unit-major order.
final class SweepWork: @unchecked Sendable {
  private let lock = NSLock()
  private let total: Int
  private let perUnit: Int
  private let runnable: [Bool]
  private var next = 0
  private var nextUnit = 0
  private var done = 0

  init(units: Int, perUnit: Int, runnable: [Bool]) {
    total = units * perUnit
    self.perUnit = perUnit
    self.runnable = runnable
  }

  /// The next indices to run (unit × seeds per unit + seed offset); nil when none are left.
  func take(starting: (Int) -> Void, progress: (Int) -> Void) -> [Int]? {
    lock.lock()
    defer { lock.unlock() }
    progress(done)
    // Units whose schema could not be made run nothing.
    while next < total, !runnable[next / perUnit] { next = (next / perUnit + 1) * perUnit }
    guard next < total else { return nil }
    let end = min(next + 4, (next / perUnit + 1) * perUnit)
    while nextUnit <= next / perUnit {
      if runnable[nextUnit] { starting(nextUnit) }
      nextUnit += 1
    }
    defer {
      done += end - next
      next = end
    }
    return Array(next..<end)
  }
}

/// One worker's share of the outcome (only its own thread writes it).
final class PartialOutcome: @unchecked Sendable {
  var byApp: [TypeOrderSweep.AppTally]
  var diagnostics: [String: TypeOrderSweep.Diagnostic] = [:]

  init(apps: Int) { byApp = [TypeOrderSweep.AppTally](repeating: .init(), count: apps) }

  func add(_ r: TypeOrderSweep.RunResult, unit: Int, app: Int, seed: UInt64) {
    byApp[app].runs += 1
    if r.failing {
      byApp[app].failing += 1
      let id = TypeOrderSweep.RunID(unit: unit, seed: seed)
      if byApp[app].firstFailing.map({ id < $0 }) ?? true { byApp[app].firstFailing = id }
    }
    byApp[app].applied += r.applied
    byApp[app].refusedAsExpected += r.refusedAsExpected
    byApp[app].refused += r.refused
    if !r.stops.isEmpty { byApp[app].stopped += 1 }
    for reason in r.stops {
      if var d = diagnostics[reason] {
        d.runs += 1
        if (unit, seed) < (d.unit, d.seed) { (d.unit, d.seed) = (unit, seed) }
        diagnostics[reason] = d
      } else {
        diagnostics[reason] = .init(reason: reason, runs: 1, unit: unit, seed: seed, unclear: TypeOrderSweep.unclearness(reason))
      }
    }
  }
}
