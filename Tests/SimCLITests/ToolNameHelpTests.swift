import Foundation
import Scenarios
import SimSyncEngine
import Testing

@testable import SimCLI

/// A tool of the user's own (`notes-sim`, built on the `SimCLI` library) names itself in its
/// help — every command's examples and references — and in the shell completion it prints, not
/// `sim-cli`, which does not have the user's apps. `sim-cli` itself is unchanged.
@Suite struct ToolNameHelpTests {
  static let apps = [AppUnderTest(RemindersApp.self)]

  static func run(_ arguments: [String], as tool: String) -> (code: ExitCode, stdout: String, stderr: String) {
    let (console, captured) = Console.capturing()
    let code = SimCLI.main(arguments: arguments, console: console, apps: apps, toolName: tool)
    return (code, captured.stdout, captured.stderr)
  }

  @Test(arguments: SimCLI.commands.map(\.spec.name))
  func everyCommandsHelpNamesTheTool(command: String) {
    for arguments in [[command, "--help"], ["help", command]] {
      let help = Self.run(arguments, as: "notes-sim")
      #expect(help.code == .success)
      #expect(!help.stdout.contains("sim-cli"), "\(arguments): \(help.stdout)")
      #expect(help.stdout.contains("Usage: notes-sim \(command)"))
      let examples = help.stdout.components(separatedBy: "\nExamples:\n").dropFirst().first ?? ""
      for line in examples.split(separator: "\n") {
        #expect(line.contains("notes-sim "), "an example that does not run the tool: \(line)")
      }
    }
    let plain = Self.run([command, "--help"], as: "sim-cli")
    #expect(!plain.stdout.contains("notes-sim"))
    #expect(plain.stdout.contains("Usage: sim-cli \(command)"))
  }

  @Test func theToolsHelpNamesItAndTheSimCLIItIsBuiltOn() {
    let help = Self.run(["--help"], as: "notes-sim")
    #expect(help.stdout.hasPrefix("notes-sim (sim-cli \(Version.string), with this tool's apps) — what will this sync design lose?\n"))
    #expect(help.stdout.contains("Usage: notes-sim COMMAND [OPTIONS]"))
    #expect(help.stdout.contains("also: notes-sim COMMAND --help, notes-sim help COMMAND"))
    #expect(help.stdout.components(separatedBy: "sim-cli").count == 2, "sim-cli is named once, as what the tool is built on")
    #expect(Self.run(["--help"], as: "sim-cli").stdout.hasPrefix("sim-cli \(Version.string) — what will this sync design lose?\n"))
  }

  @Test(arguments: ["bash", "zsh", "fish"])
  func theCompletionScriptCompletesTheTool(shell: String) {
    let script = Self.run(["completion", shell], as: "notes-sim").stdout
    #expect(!script.contains("sim-cli") && !script.contains("sim_cli"), "\(script)")
    let expected = ["bash": "complete -F _notes_sim notes-sim\n", "zsh": "#compdef notes-sim\n", "fish": "complete -c notes-sim -f\n"][shell]!
    #expect(script.contains(expected))
  }

  @Test func aScenarioNotFoundPointsAtTheToolsList() {
    let missing = Self.run(["run", "no-such-lesson"], as: "notes-sim")
    #expect(missing.stderr.contains("See 'notes-sim list' for the named scenarios."), "\(missing.stderr)")
  }
}
