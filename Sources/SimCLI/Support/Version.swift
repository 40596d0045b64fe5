/// The tool's version. Same scenario + same seed + same version ⇒ the same trace hash.
public enum Version {
  public static let string = "0.1.0"
}
