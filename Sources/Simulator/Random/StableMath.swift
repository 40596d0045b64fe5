/// Floating-point functions built from IEEE-754 basic operations only (`+ - * /`, which are
/// correctly rounded everywhere), so that their results are bit-identical on every platform.
/// The C library's transcendental functions may differ in the last bit between systems, and a
/// last bit can decide which of two messages arrives first.
@_spi(Kernel) public enum StableMath {
  /// The natural logarithm of a positive, finite `x` (relative error below 1e-15).
  public static func log(_ x: Double) -> Double {
    precondition(x > 0 && x.isFinite, "StableMath.log of \(x)")
    // x = m * 2^e with m in [1, 2); then move m into [sqrt(1/2), sqrt(2)) for a short series.
    var m = x.significand
    var e = Double(x.exponent)
    if m > 1.4142135623730951 {
      m /= 2
      e += 1
    }
    // ln(m) = 2 atanh(z), z = (m - 1) / (m + 1), |z| < 0.1716.
    let z = (m - 1) / (m + 1)
    let z2 = z * z
    var term = z
    var sum = 0.0
    var k = 1.0
    while k < 60 {
      sum += term / k
      term *= z2
      k += 2
    }
    let ln2 = 0.6931471805599453
    return 2 * sum + e * ln2
  }
}
