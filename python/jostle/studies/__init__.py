"""What each study is: its typed settings (a dataclass; commands/ turns the options into it) →
the campaign's runs (RunSpecs), with the checks that refuse a plan before anything launches.
A study knows nothing of argparse, launches nothing and draws nothing: commands/ parses, asks
the study for its runs and ends in the one campaign tail (commands/_common.run_campaign)."""
