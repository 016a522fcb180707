"""Statistical disclosure control as statistics offices practise it (sdcMicro, ARX): methods that
perturb or locally suppress a survey table, run on veil's class core.

==========================  ===================================================================
module                      job
==========================  ===================================================================
``local_suppression``       cells (not records) suppressed until k-anonymity or a risk threshold
                            holds, greedy or optimal
``pram``                    post-randomization of categorical columns, given or invariant matrix,
                            with the unbiased estimator and its disclosure measure
``coding``                  top and bottom coding of numeric columns
``swapping``                rank swapping (p % range)
``noise``                   additive noise, uncorrelated or correlated
``utility``                 information loss of perturbed data (IL1s, moments, eigenvalues)
``table_risk``              key frequencies and Benedetti–Franconi risk of a table as read, a
                            suppressed cell matching any value
``pipeline``                a configuration's method run on a table (recoding first if asked)
``release``                 the perturbed table with its manifest and private file
==========================  ===================================================================

The modules are imported by name (``from veil.sdc.pram import pram``); this package imports none
of them, so that each stands alone.
"""
