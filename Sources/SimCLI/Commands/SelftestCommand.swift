import Simulator

/// `sim-cli selftest`: runs the kernel's seeded workload and prints its trace hash, so that
/// determinism can be checked across processes and machines.
enum SelftestCommand {
  static let spec = CommandSpec(
    name: "selftest", summary: "Print the trace hash of the kernel's seeded workload (a determinism check).",
    discussion: "The same seed must print the same hash in every process and on every machine.",
    options: [
      .value("--seed", "N", "The seed (default 1)."),
      .value("--messages", "N", "Messages to send (default 2000)."),
      Formats.option,
    ],
    hidden: true)

  static let command = Command(spec: spec) { args, console in
    guard let seed = IntegerOption.parse(args, "--seed", default: 1, in: 0...UInt64.max, spec: spec, console: console),
      let messages = IntegerOption.parse(args, "--messages", default: 2_000, in: 1...10_000_000, spec: spec, console: console)
    else { return .usage }
    let trace = KernelWorkload.run(seed: seed, messages: Int(messages))
    if args.value("--format") == "json" {
      let value: JSONValue = ["seed": .int(Int64(bitPattern: seed)), "messages": .int(Int64(messages)), "records": .int(Int64(trace.count)), "traceHash": .string(trace.hash)]
      console.out(value.serialized() + "\n")
    } else {
      console.out("kernel workload seed \(seed): \(trace.count) records, trace hash \(trace.hash)\n")
    }
    return .success
  }
}

/// Reads an integer option with a range check, reporting a usage error itself.
enum IntegerOption {
  static func parse(_ args: ParsedArguments, _ name: String, default value: UInt64, in range: ClosedRange<UInt64>, spec: CommandSpec, console: Console) -> UInt64? {
    guard let text = args.value(name) else { return value }
    guard let n = UInt64(text), range.contains(n) else {
      console.err(UsageError.invalidValue(option: name, value: text, reason: "expected a whole number from \(range.lowerBound) to \(range.upperBound)", suggestion: nil).render(command: spec))
      return nil
    }
    return n
  }
}
