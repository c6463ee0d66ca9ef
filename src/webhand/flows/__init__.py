"""Private: flows, tasks recorded once from a session's history and run again without the model.

``format`` is the flow file (what is saved, validated, replayed and exported). The rest of the
package records richer targets, keeps the flows folder, replays and heals, and exports scripts.
"""
