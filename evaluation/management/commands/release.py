"""``manage.py release PROJECT``: cut the next gold release of a project and print its version."""

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotation.management.lookup import project_or_error
from evaluation.releases.options import RELEASE_OPTIONS
from evaluation.releases.splits import SPLITS, SplitRatioError
from evaluation.services import ReleaseError, release_build_and_keep, release_create


class Command(BaseCommand):
    help = (
        "Freeze the project's approved items into release vN with seeded, stratified train/dev/test splits."
    )

    def add_arguments(self, parser):
        # The options of evaluation.releases.options.RELEASE_OPTIONS, as the page and the API offer them.
        parser.add_argument("project", help="the project's slug")
        parser.add_argument("--seed", type=int, default=RELEASE_OPTIONS["seed"])
        parser.add_argument(
            "--splits",
            default=",".join(f"{RELEASE_OPTIONS['split_ratios'][name]:g}" for name in SPLITS),
            help="train,dev,test ratios adding up to 1",
        )
        parser.add_argument(
            "--license", default=RELEASE_OPTIONS["license"], help="Hugging Face license id for the card"
        )
        parser.add_argument(
            "--citation", default=RELEASE_OPTIONS["citation"], help="how to cite the release (BibTeX)"
        )
        parser.add_argument("--notes", default=RELEASE_OPTIONS["notes"], help="notes for the card")
        parser.add_argument(
            "--stratify-by", default="", help="item metadata field to subsample by (e.g. cell)"
        )
        parser.add_argument(
            "--max-per-stratum", type=int, help="keep at most this many items per value of it"
        )

    def handle(self, *args, **options):
        project = project_or_error(options["project"])
        bar = tqdm(total=0, unit="item", desc="freezing", disable=options["verbosity"] == 0, file=self.stderr)

        def progress(release):
            bar.total = release.total
            bar.set_description(release.stage or "done")
            bar.n = release.done
            bar.refresh()

        try:
            release = release_create(
                project=project,
                seed=options["seed"],
                split_ratios=options["splits"],
                license=options["license"],
                citation=options["citation"],
                notes=options["notes"],
                subsample=_subsample(options),
            )
            release = release_build_and_keep(release=release, on_progress=progress)
        except (ReleaseError, SplitRatioError) as exc:
            raise CommandError(str(exc)) from exc
        finally:
            bar.close()
        splits = ", ".join(f"{name} {n}" for name, n in release.counts["splits"].items())
        self.stdout.write(f"{release.tag}")
        if options["verbosity"]:
            self.stderr.write(
                f"{project.slug} {release.tag}: {release.counts['n_items']} items ({splits}); "
                f"sha256 {release.checksum}"
            )


def _subsample(options) -> dict | None:
    if not options["stratify_by"] and options["max_per_stratum"] is None:
        return None
    if not options["stratify_by"] or options["max_per_stratum"] is None:
        raise CommandError("to subsample, give both --stratify-by and --max-per-stratum")
    return {"field": options["stratify_by"], "max_per_stratum": options["max_per_stratum"]}
