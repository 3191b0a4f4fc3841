// Benchmarks print figures; they are never timed unit tests.
// Usage: swift run -c release RoloBench <vcard|card-rows|xml|store|web-store|login|history|directory|directory-ldap> [options]
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "vcard": runVCardBenchmark(Array(arguments.dropFirst()))
case "card-rows": runCardRowsBenchmark(Array(arguments.dropFirst()))
case "xml": runXMLBenchmark(Array(arguments.dropFirst()))
case "store": await runStoreBenchmark(Array(arguments.dropFirst()))
case "web-store": await runWebStoreBenchmark(Array(arguments.dropFirst()))
case "store-serve": await runStoreServe(Array(arguments.dropFirst()))
case "store-puts": await runStorePutsBenchmark(Array(arguments.dropFirst()))
case "store-crash-writer": await runStoreCrashWriter(Array(arguments.dropFirst()))
case "login": await runLoginBenchmark(Array(arguments.dropFirst()))
case "history": await runHistoryBenchmark(Array(arguments.dropFirst()))
case "directory": await runDirectoryBenchmark(Array(arguments.dropFirst()))
case "directory-ldap": await runDirectoryLDAPBenchmark(Array(arguments.dropFirst()))
default:
    FileHandle.standardError.write(Data("usage: RoloBench vcard|card-rows|xml|store|web-store|store-serve|store-puts|store-crash-writer|login|history|directory|directory-ldap\n".utf8))
    exit(2)
}
