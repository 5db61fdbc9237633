CREATE TABLE `trust_revocations` (
	`id` text PRIMARY KEY NOT NULL,
	`host_id` text,
	`user_id` text NOT NULL,
	`target_kind` text NOT NULL,
	`target_id` text NOT NULL,
	`statement` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `trust_revocations_host` ON `trust_revocations` (`host_id`);--> statement-breakpoint
CREATE INDEX `trust_revocations_user` ON `trust_revocations` (`user_id`);--> statement-breakpoint
ALTER TABLE `grants` ADD `statement` text;