/// The tool's version. Same scenario + same seed + same version ⇒ the same trace hash.
public enum Version {
  /// The version `sim-cli --version` prints (`MAJOR.MINOR.PATCH`).
  public static let string = "0.2.0"
}
