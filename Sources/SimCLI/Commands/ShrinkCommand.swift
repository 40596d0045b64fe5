import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli shrink FILE|NAME --seed N`: the smallest scenario that still fails the same way.
enum ShrinkCommand {
  static let spec = CommandSpec(
    name: "shrink", summary: "Minimise one failing run to a small scenario file.",
    discussion: """
      Shrinks the run of FILE|NAME with --seed N, or with --fuzz the fuzz case of seed N whose
      workload FILE|NAME shapes ('default' for the built-in workload). Keeps the first violation's
      kind (or --kind). Prints the minimal scenario and the command that replays it. Exit 1 when
      it shrank a failure (the run fails), 0 when the run shows nothing to shrink.
      """,
    positionals: [.init(name: "FILE|NAME", help: "A scenario file or name; with --fuzz, the workload shape or 'default'.")],
    options: [
      .value("--seed", "N", "The failing seed."),
      .value("--policy", "SPEC", "The policy under test."),
      ScenarioOptions.appOption,
      .flag("--fuzz", "Shrink the fuzz case of --seed instead of the scenario itself."),
      .value("--kind", "KIND", "The anomaly kind to keep (default: the first violation)."),
      .value("--out", "FILE", "Where to write the minimal scenario."),
      .value("--timeline", "FILE.svg", "Write a timeline picture of the minimal run."),
    ],
    examples: ["sim-cli shrink --fuzz default --seed 17 --policy mark-first-unit --out min.scenario"])

  static let command = Command(spec: spec) { args, console in
    let seed: UInt64?
    let policy: PolicySpec?
    let app: AppUnderTest?
    do throws(CommandExit) {
      seed = try ScenarioOptions.seed(args, spec: spec, console: console)
      app = try ScenarioOptions.app(args, spec: spec, console: console)
      policy = app != nil ? AppUnderTest.judgedAs : try ScenarioOptions.policy(args, spec: spec, console: console)
    } catch {
      return error.code
    }
    var kind: AnomalyKind?
    if let k = args.value("--kind") {
      guard let parsed = AnomalyKind(rawValue: k), parsed.isViolation else {
        let names = AnomalyKind.allCases.filter(\.isViolation).map(\.rawValue)
        console.err(
          UsageError.invalidValue(
            option: "--kind", value: k, reason: "expected a violation kind: \(names.joined(separator: ", "))",
            suggestion: Suggestion.closest(to: k, in: names)
          ).render(command: spec))
        return .usage
      }
      kind = parsed
    }
    do throws(CommandExit) {
      try ScenarioOptions.checkOutputs(args, ["--out", "--timeline"], spec: spec, console: console)
    } catch { return error.code }
    let subject = args.positionals[0]
    var file: ScenarioFile
    if args.has("--fuzz") {
      guard let seed else {
        console.err(UsageError.other("--fuzz needs --seed N: the fuzz seed to shrink.").render(command: spec))
        return .usage
      }
      var shape = WorkloadShape()
      if subject != "default" {
        do throws(CommandExit) { shape.base = try ScenarioOptions.workloadBase(subject, console: console) } catch { return error.code }
      }
      if let app { shape = shape.forApp(app) }
      file = WorkloadGenerator.generate(seed: seed, shape: shape, policy: policy ?? (try! PolicySpec.parse("append-only").get())).file
    } else {
      do throws(CommandExit) { file = try ScenarioOptions.load(subject, console: console) } catch { return error.code }
    }
    if let refused = ScenarioOptions.refusingSharing(file, app: app, spec: spec, console: console) { return refused }
    let runSeed = seed ?? file.seed
    console.err("shrinking \(file.name) with seed \(runSeed)…\n")
    let shrunk =
      app.map { Shrinker.shrink(file, seed: runSeed, app: $0, kind: kind) } ?? Shrinker.shrink(file, seed: runSeed, policy: policy, kind: kind)
    guard let result = shrunk else {
      let subject = app?.policyName ?? policy?.description ?? file.policy.description
      console.err("Nothing to shrink: seed \(runSeed) of \(file.name) shows no \(kind?.rawValue ?? "violation") under \(subject).\n")
      return .success
    }
    let text = result.text
    var path = args.value("--out")
    if let out = path {
      do throws(AtomicFile.WriteError) {
        try AtomicFile.write(text, to: out)
      } catch {
        throw CLIError.io(what: "'\(error.path)'", reason: error.reason, hint: nil)
      }
    } else {
      console.out(text)
      path = result.file.source
    }
    if let svg = args.value("--timeline") {
      let minimal = app.map { ScenarioRunner.run(result.file, app: $0, keepEvents: true) } ?? ScenarioRunner.run(result.file, keepEvents: true)
      do throws(AtomicFile.WriteError) {
        try AtomicFile.write(TimelineSVG.render(minimal), to: svg)
        console.err("wrote timeline \(svg)\n")
      } catch {
        throw CLIError.io(what: "'\(error.path)'", reason: error.reason, hint: nil)
      }
    }
    let appArgument = app.map { " --app \(CrashReport.shellWord($0.name))" } ?? ""
    console.err("kept \(result.kind.rawValue) with \(result.file.timeline.count) timeline lines after \(result.runs) runs\n")
    if args.value("--out") != nil {
      console.err("replay: \(ToolName.current) run \(path!)\(appArgument)\n")
    } else {
      console.err(
        "replay: save the scenario printed above as \(path!), then: \(ToolName.current) run \(path!)\(appArgument) (or pass --out FILE to write it)\n"
      )
    }
    return .failure
  }
}
