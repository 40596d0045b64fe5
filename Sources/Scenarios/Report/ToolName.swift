/// The name of the command-line tool printing a report, for the commands it suggests
/// (`reproduce: sim-cli run …`): `sim-cli`, or the name of a tool a user built from the `SimCLI`
/// library with their own apps registered, so that the line they copy runs their tool.
package enum ToolName {
  /// The tool's name for the code running now.
  @TaskLocal package static var current = "sim-cli"
}
