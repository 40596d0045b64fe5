import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli selftest`: runs the kernel's seeded workload and prints its trace hash, so that
/// determinism can be checked across processes and machines; with `--oracles`, judges fuzz seeds
/// under every preset with both the oracle and the independent reference checker and compares.
enum SelftestCommand {
  static let spec = CommandSpec(
    name: "selftest",
    summary: "Check determinism (the kernel's trace hash), the oracle against the reference checker, or every app on every order of types.",
    discussion: """
      Without --oracles: prints the trace hash of the kernel's seeded workload; the same seed
      must print the same hash in every process and on every machine.
      With --oracles: runs every seed of --seeds (default 1..300) under every built-in preset,
      judges each run with the oracle and with an independent reference checker that rebuilds
      causality from the run's raw observations, and compares anomaly kinds per record and field.
      With --workload app, the seeds are drawn from the workload for a user's app (values unique
      per intent, records deleted and created again under their names) and still run under every
      preset. With --app NAME (or all), each seed runs the app on every device, on the workload
      for that app (its own schema when it states one). Exit 0 when they agree on every run, 1
      with the first difference (seed order).
      With --type-orders: runs the fuzz workload for apps (as fuzz --app APP --scenario FILE
      does) on the schema of every named scenario and every --scenario, identical schemas once,
      with its types declared in every order (a schema of more than 6 types: every rotation and
      its reversal), × every app (--app narrows) × --seeds (default 1..2000). An app that
      states its schema runs on every order of its own instead. Prints a table per app (runs,
      runs failing the oracle, intents the app refused, runs a device's app stopped with a
      diagnostic, internal errors), each distinct diagnostic once with the command that runs its
      first, and a summary with runs/s. Exit 0 when nothing is an internal error and every
      diagnostic is a clear sentence; 1 with an unclear one; 70 with an internal error (a crash
      names the run that was going on and the command that runs it alone).
      """,
    options: [
      .value("--seed", "N", "The kernel workload's seed (default 1)."),
      .value("--messages", "N", "Messages to send (default 2000)."),
      .flag("--oracles", "Compare the oracle with the reference checker on fuzz seeds."),
      .value("--seeds", "A..B", "With --oracles: the seeds (default 1..300)."),
      .value("--jobs", "N", "With --oracles: parallel workers (default: the core count)."),
      .value(
        "--workload", "default|app|sharing|assets",
        "With --oracles: the fuzzer's workload (default), the one for apps, the default with sharing drawn, or a photo album with assets."),
      .value(
        "--app", "NAME|all",
        "With --oracles: run this app (or every one this tool was built with) on the workload for it, instead of the presets. With --type-orders: only this app (default all)."
      ),
      .flag("--type-orders", "Run every app on every order of the types of every scenario's schema."),
      .value("--scenario", "FILE|NAME", "With --type-orders: sweep this scenario's schema too (repeatable).", repeatable: true),
      .flag("--no-named", "With --type-orders: leave out the named scenarios (sim-cli list); sweep only the --scenario ones."),
      .value("--order", "TYPE,TYPE,…", "With --type-orders: run only this order of types (what each reproduce line uses)."),
      .value("--intents", "N", "With --type-orders: intents per run, 1 to 100000 (default 50)."),
      .flag("--verbose", "With --type-orders: print each (order, app) before its first run."),
      Formats.option,
    ],
    examples: [
      "sim-cli selftest --seed 1", "sim-cli selftest --oracles --seeds 1..100000",
      "sim-cli selftest --type-orders --seeds 1..2000 --scenario my-app.scenario",
    ],
    hidden: true)

  static let command = Command(spec: spec) { args, console in
    if args.has("--type-orders") {
      do { return try typeOrders(args, console) } catch let exit as CommandExit { return exit.code }
    }
    for option in typeOrderOptions where args.has(option) {
      console.err(UsageError.other("'\(option)' applies only with --type-orders.").render(command: spec))
      return .usage
    }
    if args.has("--oracles") { return oracles(args, console) }
    // The options of --oracles mean nothing without it: taking them silently (`--jobs 0`,
    // `--seeds 5..1`, `--workload garbage` exited 0) would let a typo pass for a check.
    for option in ["--seeds", "--jobs", "--workload", "--app"] where args.value(option) != nil {
      let with = option == "--workload" ? "--oracles" : "--oracles or --type-orders"
      console.err(UsageError.other("'\(option)' applies only with \(with).").render(command: spec))
      return .usage
    }
    guard let seed = IntegerOption.parse(args, "--seed", default: 1, in: 0...UInt64.max, spec: spec, console: console),
      let messages = IntegerOption.parse(args, "--messages", default: 2_000, in: 1...10_000_000, spec: spec, console: console)
    else { return .usage }
    let trace = KernelWorkload.run(seed: seed, messages: Int(messages))
    if args.value("--format") == "json" {
      let value: JSONValue = [
        "seed": .int(Int64(bitPattern: seed)), "messages": .int(Int64(messages)), "records": .int(Int64(trace.count)),
        "traceHash": .string(trace.hash),
      ]
      console.out(value.serialized() + "\n")
    } else {
      console.out("kernel workload seed \(seed): \(trace.count) records, trace hash \(trace.hash)\n")
    }
    return .success
  }

  static func oracles(_ args: ParsedArguments, _ console: Console) -> ExitCode {
    let text = args.value("--seeds") ?? "1..300"
    guard let range = SeedRange.parse(text) else {
      console.err(
        UsageError.invalidValue(option: "--seeds", value: text, reason: "expected A..B with A <= B, e.g. 1..300", suggestion: nil).render(
          command: spec))
      return .usage
    }
    guard
      let jobs = IntegerOption.parse(
        args, "--jobs", default: UInt64(ProcessInfo.processInfo.activeProcessorCount), in: 1...Count.maxJobs, spec: spec, console: console)
    else {
      return .usage
    }
    var shape = WorkloadShape()
    switch args.value("--workload") ?? "default" {
    case "default": break
    case "app": shape.forApps = true
    case "sharing": shape.sharing = true
    case "assets": shape.schema = WorkloadShape.albumSchema
    case let other:
      console.err(
        UsageError.invalidValue(
          option: "--workload", value: other, reason: "expected default, app, sharing or assets",
          suggestion: Suggestion.closest(to: other, in: ["default", "app", "sharing", "assets"])
        ).render(command: spec))
      return .usage
    }
    let workload = shape
    // The subjects each seed runs under: every preset, or the apps asked for.
    var apps: [AppUnderTest] = []
    if let name = args.value("--app") {
      apps = name == "all" ? SimCLI.apps : SimCLI.apps.filter { $0.name == name }
      guard !apps.isEmpty else {
        let reason =
          SimCLI.apps.isEmpty ? "this tool was built without apps" : "expected all or one of: \(SimCLI.apps.map(\.name).joined(separator: ", "))"
        console.err(
          UsageError.invalidValue(option: "--app", value: name, reason: reason, suggestion: Suggestion.closest(to: name, in: SimCLI.apps.map(\.name)))
            .render(command: spec))
        return .usage
      }
    }
    let subjects = apps
    let presets = subjects.isEmpty ? OracleAgreement.presets : []
    let clock = WallClock()
    // Seeds are taken a chunk at a time, never all at once (`--seeds 1..1000000000` once
    // allocated 8 GB before the first run), in seed order, so the first difference reported is
    // the first in seed order.
    let total = range.upper - range.lower &+ 1  // 0: all 2^64 seeds
    let totalText = total == 0 ? "18446744073709551616" : "\(total)"
    let chunk = 64 * UInt64(jobs)
    var done: UInt64 = 0
    var lastTick = 0.0
    for slice in SeedChunks(lower: range.lower, upper: range.upper, size: chunk) {
      let found = DifferenceSlots(count: slice.count)
      DispatchQueue.concurrentPerform(iterations: Int(jobs)) { worker in
        for i in stride(from: worker, to: slice.count, by: Int(jobs)) {
          for p in presets {
            if let d = OracleAgreement.compare(seed: slice[i], policy: p, shape: workload) {
              found.set(i, d)
              break
            }
          }
          for app in subjects {
            if let d = OracleAgreement.compare(seed: slice[i], app: app, shape: workload) {
              found.set(i, d)
              break
            }
          }
        }
      }
      if let first = found.first {
        console.out("oracles disagree: \(first)\n")
        return .failure
      }
      done += UInt64(slice.count)
      if clock.elapsedSeconds - lastTick >= 30 {
        lastTick = clock.elapsedSeconds
        console.err(
          "selftest --oracles: \(done)/\(totalText) seeds × \(presets.count + subjects.count) \(subjects.isEmpty ? "presets" : "apps") agree · \(Int(clock.elapsedSeconds))s\n"
        )
      }
    }
    let runs = Double(done) * Double(presets.count + subjects.count)
    let rate = Double(runs) / max(clock.elapsedSeconds, 1e-9)
    let what =
      subjects.isEmpty
      ? "\(presets.count) presets\(shape.forApps ? " (workload for apps)" : "")"
      : subjects.count == 1 ? "app \(subjects[0].name)" : "\(subjects.count) apps"
    console.out(
      "oracles agree on \(UInt64(runs)) runs: seeds \(range.lower)..\(range.upper) × \(what), \(BenchCommand.group(rate)) runs/s with \(jobs) job\(jobs == 1 ? "" : "s")\n"
    )
    return .success
  }
}

/// The first difference per position of a chunk, filled by parallel workers.
final class DifferenceSlots: @unchecked Sendable {
  private let lock = NSLock()
  private var slots: [OracleAgreement.Difference?]
  init(count: Int) { slots = Array(repeating: nil, count: count) }
  func set(_ i: Int, _ d: OracleAgreement.Difference) { lock.withLock { slots[i] = d } }
  var first: OracleAgreement.Difference? { lock.withLock { slots.compactMap { $0 }.first } }
}

/// `lower...upper` a chunk of `size` seeds at a time, in order, without holding the range: the
/// last seed may be `UInt64.max`.
struct SeedChunks: Sequence, IteratorProtocol {
  private var cursor: UInt64?
  let upper: UInt64
  let size: UInt64

  init(lower: UInt64, upper: UInt64, size: UInt64) {
    cursor = lower <= upper ? lower : nil
    self.upper = upper
    self.size = Swift.max(1, size)
  }

  mutating func next() -> [UInt64]? {
    guard let from = cursor else { return nil }
    let to = upper - from < size ? upper : from + size - 1
    cursor = to == upper ? nil : to + 1
    return Array(from...to)
  }
}
