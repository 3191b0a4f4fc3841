extension Duration {
    /// The duration in seconds, as the benchmarks print their figures.
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
