import Testing

@testable import SimCLI

@Suite struct UsageTests {
  @Test func noCommandIsAUsageError() {
    let r = runCLI()
    #expect(r.code == .usage)
    #expect(r.stderr == "Error: no command given.\nUsage: sim-cli COMMAND [OPTIONS]\nSee 'sim-cli --help'.\n")
    #expect(r.stdout.isEmpty)
  }

  @Test func aMisspeltCommandGetsADidYouMean() {
    let r = runCLI("rn", "x")
    #expect(r.code == .usage)
    #expect(r.stderr.hasPrefix("Error: unknown command 'rn'. Did you mean 'run'?\n"))
    #expect(runCLI("polices").stderr.contains("Did you mean 'policies'?"))
    #expect(runCLI("benhc").stderr.contains("Did you mean 'bench'?"))
    #expect(!runCLI("zzzzzz").stderr.contains("Did you mean"))
  }

  @Test func aMisspeltFlagGetsADidYouMeanAndTheCommandsUsage() {
    let r = runCLI("run", "two-device-acceptance", "--sed", "3")
    #expect(r.code == .usage)
    #expect(
      r.stderr == """
        Error: unknown option '--sed'. Did you mean '--seed'?
        Usage: \(RunCommand.spec.usage)
        See 'sim-cli run --help'.

        """)
  }

  @Test func choicesAreCheckedWithASuggestion() {
    let r = runCLI("bench", "kernel", "--format", "jsn")
    #expect(r.code == .usage)
    #expect(r.stderr.hasPrefix("Error: invalid value 'jsn' for '--format': expected one of text, json. Did you mean 'json'?"))
    #expect(runCLI("bench", "kernal").stderr.contains("Did you mean 'kernel'?"))
    // A reason that ends in its own suggestion is not followed by a stray period.
    let policy = runCLI("run", "two-device-acceptance", "--policy", "crdt winner=clok")
    #expect(policy.stderr.hasPrefix("Error: invalid value 'crdt winner=clok' for '--policy': "), "\(policy.stderr)")
    #expect(policy.stderr.contains("did you mean 'clock'?\n"), "\(policy.stderr)")
  }

  @Test func missingValuesRepeatsAndStrayArgumentsAreUsageErrors() {
    #expect(runCLI("selftest", "--seed").stderr.hasPrefix("Error: missing value for '--seed N'."))
    #expect(runCLI("selftest", "--seed", "1", "--seed", "2").stderr.hasPrefix("Error: '--seed' was given more than once."))
    #expect(runCLI("selftest", "extra").stderr.hasPrefix("Error: unexpected argument 'extra'."))
    #expect(runCLI("selftest", "--seed", "x").stderr.hasPrefix("Error: invalid value 'x' for '--seed'"))
    #expect(runCLI("selftest", "--seed=4").code == .success)
  }

  @Test func everyCommandHasHelp() {
    for command in SimCLI.commands {
      let r = runCLI(command.spec.name, "--help")
      #expect(r.code == .success, "\(command.spec.name)")
      #expect(r.stdout.contains("Usage: sim-cli \(command.spec.name)"))
      #expect(runCLI("help", command.spec.name).stdout == r.stdout)
    }
    let top = runCLI("--help")
    #expect(top.code == .success)
    for command in SimCLI.commands { #expect(top.stdout.contains(command.spec.name)) }
  }

  @Test func versionIsPrinted() {
    #expect(runCLI("--version").stdout == "sim-cli \(Version.string)\n")
  }
}
