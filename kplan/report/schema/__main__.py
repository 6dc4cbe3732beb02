from kplan.report.schema import main

main()
