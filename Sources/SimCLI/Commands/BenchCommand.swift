import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli bench [kernel|scenario|fuzz|app|scale|curve]`: throughput figures.
enum BenchCommand {
  static let subjects = ["kernel", "scenario", "fuzz", "app", "scale", "curve"]
  static let spec = CommandSpec(
    name: "bench", summary: "Print throughput figures (events/s, runs/s, seeds/s, memory).",
    discussion: """
      kernel    events/s of a ping-pong workload at 16, 1,000 and 100,000 pending events, next to a
                bare hand-written heap loop running the same workload (the yardstick).
      scenario  whole runs/s of a scenario (two-device-acceptance by default) on one core: world,
                timeline, settle, oracle and report; also events and messages per run, the
                wall time per simulated event beside the kernel's (16 pending, measured too),
                and the same runs of the world alone (no oracle, no report).
      fuzz      seeds/s of the default fuzz workload (append-only) at 3 devices × 50 intents, one
                job, and its cost per simulated event beside the kernel's.
      app       seeds/s of 'fuzz --app NAME' (NotesApp by default) on one job, and per call into
                the app's delegate the wall time of the simulator and of the app's own code;
                also what the app wrote to its disk per seed (bytes, writes).
      scale     one run of 1,000 devices × 100,000 intents to settle, judged by the oracle: wall
                time, peak memory and the anomalies found.
      curve     the scale workload with the oracle as the devices grow (2, 5, 20, 100, 1,000 at
                5,000 intents) and as the intents grow (50 … 50,000 at 20 devices): wall time
                per event, per intent and per record copy moved, and peak memory, per row.
      Build with -c release: debug builds are many times slower.
      """,
    positionals: [.init(name: "kernel|scenario|fuzz|app|scale|curve", help: "Which benchmark (default: kernel).", optional: true)],
    options: [
      .value("--events", "N", "kernel: events per trial (default 2000000)."),
      .value("--trials", "N", "kernel: trials per size; the median is printed (default 3)."),
      .value("--scenario", "FILE|NAME", "scenario: which scenario (default two-device-acceptance)."),
      .value("--seconds", "N", "scenario, fuzz, app: how long to measure (default 3)."),
      .value("--runs", "N", "scenario, fuzz, app: exactly N runs or seeds instead of --seconds (fixed work, for instruction counts)."),
      .value("--app", "NAME", "app: which app this tool was built with (default NotesApp)."),
      .value("--devices", "N", "fuzz: devices per seed (default 3); scale: devices (default 1000)."),
      .value("--intents", "N", "fuzz: intents per seed (default 50); scale: intents (default 100000)."),
      .value("--asset-size", "SIZE", "scale: every note also gets an asset of this size (10KB … 50MB) at each create and edit."),
      Formats.option,
    ],
    subjects: subjects,
    examples: ["swift run -c release sim-cli bench kernel", "sim-cli bench kernel --format json", "sim-cli bench app --app RemindersApp"])

  static let command = Command(spec: spec) { args, console in
    switch args.positionals.first ?? "kernel" {
    case "kernel":
      return kernel(args, console)
    case "scenario":
      return scenario(args, console)
    case "fuzz":
      return fuzz(args, console)
    case "app":
      return app(args, console)
    case "curve":
      return curve(args, console)
    default:
      return scale(args, console)
    }
  }

  static func kernel(_ args: ParsedArguments, _ console: Console) -> ExitCode {
    guard let events = IntegerOption.parse(args, "--events", default: 2_000_000, in: 1_000...1_000_000_000, spec: spec, console: console),
      let trials = IntegerOption.parse(args, "--trials", default: 3, in: 1...100, spec: spec, console: console)
    else { return .usage }
    #if DEBUG
      console.err("warning: this is a debug build; figures are not representative. Use 'swift run -c release \(ToolName.current) bench kernel'.\n")
    #endif
    let json = args.value("--format") == "json"
    var results: [KernelBenchmark.Result] = []
    for pending in [16, 1_000, 100_000] {
      console.err("bench kernel: \(pending) pending…\n")
      results.append(KernelBenchmark.measure(pending: pending, events: Int(events), trials: Int(trials)))
    }
    if json {
      let value: JSONValue = [
        "benchmark": "kernel",
        "results": .array(
          results.map { r in
            [
              "pending": .int(Int64(r.pending)),
              "eventsPerSecond": .int(Int64(r.eventsPerSecond.rounded())),
              "bareLoopEventsPerSecond": .int(Int64(r.bareEventsPerSecond.rounded())),
            ]
          }),
      ]
      console.out(value.serialized() + "\n")
    } else {
      var text = "kernel: ping-pong on EventLoop vs. a bare heap loop (median of \(trials) × \(events) events)\n"
      text += "  pending     events/s    bare loop/s   bare/kernel\n"
      for r in results {
        text +=
          "  " + pad(String(r.pending), 7) + "  " + pad(group(r.eventsPerSecond), 11) + "  " + pad(group(r.bareEventsPerSecond), 13)
          + "  " + pad(String(format2(r.slowdown)) + "×", 11) + "\n"
      }
      console.out(text)
    }
    return .success
  }

  static func scenario(_ args: ParsedArguments, _ console: Console) -> ExitCode {
    guard let seconds = IntegerOption.parse(args, "--seconds", default: 3, in: 1...600, spec: spec, console: console) else { return .usage }
    let file: ScenarioFile
    do throws(CommandExit) {
      file = try ScenarioOptions.load(args.value("--scenario") ?? "two-device-acceptance", console: console)
    } catch {
      return error.code
    }
    #if DEBUG
      console.err("warning: this is a debug build; figures are not representative. Use 'swift run -c release \(ToolName.current) bench scenario'.\n")
    #endif
    guard let runs = fixedRuns(args, console) else { return .usage }
    let r = ScenarioBenchmark.measure(file, seconds: Double(seconds), runs: runs.count)
    let kernel = kernelYardstick()
    let perEvent = 1e9 / (r.runsPerSecond * Double(max(r.eventsPerRun, 1)))
    let worldPerEvent = 1e9 / (r.worldOnlyRunsPerSecond * Double(max(r.eventsPerRun, 1)))
    if args.value("--format") == "json" {
      let value: JSONValue = [
        "benchmark": "scenario", "scenario": .string(r.scenario), "runsPerSecond": .int(Int64(r.runsPerSecond.rounded())),
        "runs": .int(Int64(r.runs)), "eventsPerRun": .int(Int64(r.eventsPerRun)), "messagesPerRun": .int(Int64(r.messagesPerRun)),
        "nanosecondsPerMessage": .int(Int64(r.nanosecondsPerMessage.rounded())),
        "nanosecondsPerEvent": .int(Int64(perEvent.rounded())), "kernelEventsPerSecond": .int(Int64(kernel.rounded())),
        "costPerEventVsKernel": .double(ratio(perEvent, kernel)),
        "worldOnlyRunsPerSecond": .int(Int64(r.worldOnlyRunsPerSecond.rounded())),
        "worldOnlyNanosecondsPerEvent": .int(Int64(worldPerEvent.rounded())),
        "worldOnlyCostPerEventVsKernel": .double(ratio(worldPerEvent, kernel)),
      ]
      console.out(value.serialized() + "\n")
    } else {
      console.out(
        """
        scenario \(r.scenario): \(group(r.runsPerSecond)) runs/s on one core (\(r.runs) runs, oracle included)
          \(r.eventsPerRun) events and \(r.messagesPerRun) messages per run; \(group(r.nanosecondsPerMessage)) ns of wall time per simulated message
          \(group(perEvent)) ns per simulated event = \(format2(ratio(perEvent, kernel)))× the kernel's \(format2(1e9 / kernel)) ns (bench kernel, 16 pending: \(group(kernel)) events/s)
          the world alone (the same runs with no oracle and no report; the trace hash folded as always): \(group(r.worldOnlyRunsPerSecond)) runs/s, \(group(worldPerEvent)) ns per event = \(format2(ratio(worldPerEvent, kernel)))× the kernel's

        """)
    }
    return .success
  }

  static func fuzz(_ args: ParsedArguments, _ console: Console) -> ExitCode {
    guard let seconds = IntegerOption.parse(args, "--seconds", default: 3, in: 1...600, spec: spec, console: console),
      let devices = IntegerOption.parse(args, "--devices", default: 3, in: 1...64, spec: spec, console: console),
      let intents = IntegerOption.parse(args, "--intents", default: 50, in: 1...100_000, spec: spec, console: console)
    else { return .usage }
    #if DEBUG
      console.err("warning: this is a debug build; figures are not representative. Use 'swift run -c release \(ToolName.current) bench fuzz'.\n")
    #endif
    guard let runs = fixedRuns(args, console) else { return .usage }
    let r = FuzzBenchmark.measure(devices: Int(devices), intents: Int(intents), seconds: Double(seconds), seeds: runs.count)
    let kernel = kernelYardstick()
    let eventsPerSecond = r.seedsPerSecond * Double(r.eventsPerSeed)
    let perEvent = 1e9 / max(eventsPerSecond, 1)
    if args.value("--format") == "json" {
      let value: JSONValue = [
        "benchmark": "fuzz", "seedsPerSecond": .int(Int64(r.seedsPerSecond.rounded())), "devices": .int(Int64(r.devices)),
        "intents": .int(Int64(r.intents)), "seeds": .int(Int64(r.seeds)), "eventsPerSeed": .int(Int64(r.eventsPerSeed)),
        "eventsPerSecond": .int(Int64(eventsPerSecond.rounded())), "nanosecondsPerEvent": .int(Int64(perEvent.rounded())),
        "kernelEventsPerSecond": .int(Int64(kernel.rounded())), "costPerEventVsKernel": .double(ratio(perEvent, kernel)),
      ]
      console.out(value.serialized() + "\n")
    } else {
      console.out(
        """
        fuzz: \(group(r.seedsPerSecond)) seeds/s on one job (\(r.devices) devices × \(r.intents) intents, append-only, oracle included; \(r.seeds) seeds, \(r.eventsPerSeed) events per seed)
          \(group(eventsPerSecond)) simulated events/s = \(group(perEvent)) ns per event, \(format2(ratio(perEvent, kernel)))× the kernel's \(format2(1e9 / kernel)) ns (bench kernel, 16 pending: \(group(kernel)) events/s)

        """)
    }
    return .success
  }

  static func app(_ args: ParsedArguments, _ console: Console) -> ExitCode {
    guard let seconds = IntegerOption.parse(args, "--seconds", default: 3, in: 1...600, spec: spec, console: console) else { return .usage }
    let app: AppUnderTest
    do throws(CommandExit) {
      guard let chosen = try ScenarioOptions.app(args, spec: spec, console: console) else {
        guard let notes = SimCLI.apps.first(where: { $0.name == "NotesApp" }) ?? SimCLI.apps.first else {
          console.err(
            UsageError.other("bench app: this tool was built without apps; build your own with SimCLI.runAsProcess(arguments:apps:)")
              .render(command: spec))
          return .usage
        }
        return appBench(notes, seconds: seconds, args, console)
      }
      app = chosen
    } catch {
      return error.code
    }
    return appBench(app, seconds: seconds, args, console)
  }

  static func appBench(_ app: AppUnderTest, seconds: UInt64, _ args: ParsedArguments, _ console: Console) -> ExitCode {
    #if DEBUG
      console.err("warning: this is a debug build; figures are not representative. Use 'swift run -c release \(ToolName.current) bench app'.\n")
    #endif
    guard let runs = fixedRuns(args, console) else { return .usage }
    let r = AppBenchmark.measure(app: app, seconds: Double(seconds), seeds: runs.count)
    if args.value("--format") == "json" {
      let value: JSONValue = [
        "benchmark": "app", "app": .string(r.app), "seedsPerSecond": .int(Int64(r.seedsPerSecond.rounded())), "seeds": .int(Int64(r.seeds)),
        "eventsPerSeed": .int(Int64(r.eventsPerSeed)), "delegateCallsPerSeed": .double((r.delegateCallsPerSeed * 10).rounded() / 10),
        "appCallsPerSeed": .double((r.appCallsPerSeed * 10).rounded() / 10),
        "nanosecondsPerDelegateCall": .int(Int64(r.nanosecondsPerDelegateCall.rounded())),
        "simulatorNanosecondsPerDelegateCall": .int(Int64(r.simulatorNanosecondsPerDelegateCall.rounded())),
        "appNanosecondsPerDelegateCall": .int(Int64(r.appNanosecondsPerDelegateCall.rounded())),
        "simulatorShare": .double((r.simulatorShare * 1000).rounded() / 1000),
        "diskBytesWrittenPerSeed": .int(Int64(r.bytesWrittenPerSeed.rounded())), "diskWritesPerSeed": .int(Int64(r.writesPerSeed.rounded())),
      ]
      console.out(value.serialized() + "\n")
    } else {
      console.out(
        """
        app \(r.app): \(group(r.seedsPerSecond)) seeds/s on one job (fuzz --app \(r.app)'s workload, oracle included; \(r.seeds) seeds, \(r.eventsPerSeed) events per seed)
          \(format2(r.delegateCallsPerSeed)) delegate calls per seed (\(format2(r.appCallsPerSeed)) calls into the app in all); per delegate call \(group(r.nanosecondsPerDelegateCall)) ns: the simulator \(group(r.simulatorNanosecondsPerDelegateCall)) ns (\(group(r.simulatorShare * 100))%), the app's own code \(group(r.appNanosecondsPerDelegateCall)) ns
          the app wrote \(group(r.bytesWrittenPerSeed)) bytes to its disk per seed, in \(group(r.writesPerSeed)) writes

        """)
    }
    return .success
  }

  static func scale(_ args: ParsedArguments, _ console: Console) -> ExitCode {
    guard let devices = IntegerOption.parse(args, "--devices", default: 1_000, in: 1...100_000, spec: spec, console: console),
      let intents = IntegerOption.parse(args, "--intents", default: 100_000, in: 1...10_000_000, spec: spec, console: console)
    else { return .usage }
    // Every device holds a copy of every record: the world grows with devices × intents. The
    // default (1,000 × 100,000) and the other corner (100,000 × 1,000) take 258 and 405 MB.
    guard devices * intents <= 100_000_000 else {
      console.err(
        UsageError.other(
          "--devices \(devices) × --intents \(intents) is a world of \(devices * intents) device × intent cells; bench scale runs at most 100000000 (every device holds a copy of every record: the default 1000 × 100000 takes about 260 MB)."
        ).render(command: spec))
      return .usage
    }
    #if DEBUG
      console.err("warning: this is a debug build; figures are not representative. Use 'swift run -c release \(ToolName.current) bench scale'.\n")
    #endif
    var assetSize: Int64?
    if let text = args.value("--asset-size") {
      switch ByteCount.parse(text) {
      case .success(let n) where n > 0 && n <= 50_000_000: assetSize = n
      case .success:
        console.err(
          UsageError.other("invalid value '\(text)' for '--asset-size': from 1B to 50MB (CloudKit's limit for an asset).").render(command: spec))
        return .usage
      case .failure(let e):
        console.err(UsageError.other("invalid value '\(text)' for '--asset-size': \(e.message).").render(command: spec))
        return .usage
      }
    }
    let r = ScaleBenchmark.run(devices: Int(devices), intents: Int(intents), assetSize: assetSize)
    let mib = Double(r.peakBytes) / 1_048_576
    if args.value("--format") == "json" {
      let value: JSONValue = [
        "benchmark": "scale", "devices": .int(Int64(r.devices)), "intents": .int(Int64(r.intents)), "records": .int(Int64(r.records)),
        "events": .int(Int64(r.events)), "messages": .int(Int64(r.messages)), "recordsMoved": .int(Int64(r.recordsMoved)),
        "simulatedTime": .string(r.simulated.description),
        "seconds": .double((r.seconds * 100).rounded() / 100), "peakResidentMiB": .int(Int64(mib.rounded())), "converged": .bool(r.converged),
        "oracle": true, "oracleSeconds": .double((r.oracleSeconds * 100).rounded() / 100),
        "anomalies": .object(Dictionary(uniqueKeysWithValues: r.anomalies.map { ($0.kind.rawValue, JSONValue.int(Int64($0.count))) })),
      ]
      console.out(value.serialized() + "\n")
    } else {
      console.out(
        """
        scale: \(group(Double(r.devices))) devices × \(group(Double(r.intents))) intents on \(group(Double(r.records))) records settled in \(format2(r.seconds)) s, peak memory \(group(mib)) MiB
          \(group(Double(r.events))) events, \(group(Double(r.messages))) messages, \(r.simulated) simulated; \(r.converged ? "converged" : "NOT converged")
          oracle: \(format2(r.oracleSeconds)) s of the total; \(r.anomalies.total == 0 ? "no anomalies" : r.anomalies.filter { $0.count > 0 }.map { "\($0.count) \($0.kind)" }.joined(separator: ", "))

        """)
    }
    return r.converged ? .success : .failure
  }

  /// `--runs N`: `(count: N)`, or `(count: nil)` without the option; nil after a usage error.
  static func fixedRuns(_ args: ParsedArguments, _ console: Console) -> (count: Int?, ())? {
    guard args.value("--runs") != nil else { return (nil, ()) }
    return IntegerOption.parse(args, "--runs", default: 1, in: 1...10_000_000, spec: spec, console: console).map { (Int($0), ()) }
  }

  /// The kernel's events/s at 16 pending (median of 3 × 1,000,000 events): the yardstick that
  /// `scenario` and `fuzz` print their cost per event beside, measured in the same sitting.
  static func kernelYardstick() -> Double {
    #if DEBUG
      // A debug build's figures mean nothing (it warns so); keep its yardstick short.
      KernelBenchmark.measure(pending: 16, events: 20_000, trials: 1).eventsPerSecond
    #else
      KernelBenchmark.measure(pending: 16, events: 1_000_000, trials: 3).eventsPerSecond
    #endif
  }

  /// `a` in units of the kernel's cost per event (`1e9 / kernelEventsPerSecond` ns), to 2 places.
  static func ratio(_ nanosecondsPerEvent: Double, _ kernelEventsPerSecond: Double) -> Double {
    (nanosecondsPerEvent / (1e9 / max(kernelEventsPerSecond, 1)) * 100).rounded() / 100
  }

  static func curve(_ args: ParsedArguments, _ console: Console) -> ExitCode {
    #if DEBUG
      console.err("warning: this is a debug build; figures are not representative. Use 'swift run -c release \(ToolName.current) bench curve'.\n")
    #endif
    let rows = CurveBenchmark.measure(minimumSeconds: 0.5) { d, i in console.err("bench curve: \(d) devices × \(i) intents…\n") }
    if args.value("--format") == "json" {
      let value: JSONValue = [
        "benchmark": "curve", "oracle": true,
        "rows": .array(
          rows.map { r in
            [
              "devices": .int(Int64(r.devices)), "intents": .int(Int64(r.intents)), "runs": .int(Int64(r.runs)),
              "eventsPerRun": .int(Int64(r.eventsPerRun)), "recordsMovedPerRun": .int(Int64(r.recordsMovedPerRun)),
              "nanosecondsPerRecordMoved": .int(Int64(r.nanosecondsPerRecordMoved.rounded())),
              "secondsPerRun": .double((r.secondsPerRun * 1e4).rounded() / 1e4),
              "nanosecondsPerEvent": .int(Int64(r.nanosecondsPerEvent.rounded())),
              "microsecondsPerIntent": .double((r.microsecondsPerIntent * 100).rounded() / 100),
              "peakResidentMiB": .int(Int64((Double(r.peakBytes) / 1_048_576).rounded())), "converged": .bool(r.converged),
            ]
          }),
      ]
      console.out(value.serialized() + "\n")
    } else {
      var text = "curve: the scale workload, judged by the oracle, one core (each row repeated for at least 0.5 s)\n"
      text += "  devices   intents   events/run  records moved    ms/run   ns/event  µs/intent  ns/record  peak MiB\n"
      for (k, r) in rows.enumerated() {
        if k == CurveBenchmark.deviceCounts.count { text += "\n" }
        text +=
          "  " + pad(group(Double(r.devices)), 7) + "  " + pad(group(Double(r.intents)), 8) + "  " + pad(group(Double(r.eventsPerRun)), 11)
          + "  " + pad(group(Double(r.recordsMovedPerRun)), 13) + "  " + pad(format2(r.secondsPerRun * 1000), 8) + "  "
          + pad(group(r.nanosecondsPerEvent), 9)
          + "  " + pad(format2(r.microsecondsPerIntent), 9) + "  " + pad(group(r.nanosecondsPerRecordMoved), 9)
          + "  " + pad(group(Double(r.peakBytes) / 1_048_576), 8) + (r.converged ? "" : "  NOT converged") + "\n"
      }
      console.out(text)
    }
    return rows.allSatisfy(\.converged) ? .success : .failure
  }

  static func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
  }

  /// 9,812,345
  static func group(_ x: Double) -> String {
    let digits = String(Int64(x.rounded()))
    var out = ""
    for (i, ch) in digits.enumerated() {
      if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
      out.append(ch)
    }
    return out
  }

  static func format2(_ x: Double) -> String {
    let hundredths = Int64((x * 100).rounded())
    let frac = hundredths % 100
    return "\(hundredths / 100).\(frac < 10 ? "0" : "")\(frac)"
  }
}
