"""Karpenter's provisioning against its own code (oracle/karpenter): the public scenario family,
the generator of random scenarios, and the differential runner (issue 45 item 4)."""
